package skiplock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/input"
)

// BulkAction is what JobsBulk does to the jobs its filter picks.
type BulkAction string

// The bulk actions, and the states each acts on.
const (
	// BulkRetry returns failed and cancelled jobs to pending, as JobRetry.
	BulkRetry BulkAction = "retry"
	// BulkCancel cancels live jobs (pending, scheduled, waiting, paused,
	// running), as JobCancel.
	BulkCancel BulkAction = "cancel"
	// BulkDelete removes finished jobs (completed, failed, cancelled) from
	// the archive for good.
	BulkDelete BulkAction = "delete"
	// BulkPause holds live jobs until resumed, as JobPause: pending,
	// scheduled and waiting ones at once; running ones are asked to pause
	// and go to paused when their worker returns.
	BulkPause BulkAction = "pause"
	// BulkResume releases paused jobs, as JobResume.
	BulkResume BulkAction = "resume"
)

// DefaultBulkBatchSize is how many jobs JobsBulk acts on at a time on
// SQLite, where each batch holds the one writer that claims wait for (a
// claim waits for at most one batch; batches of 50 doubled the claims' p99
// while an action ran, docs/performance.md); DefaultBulkBatchSizePostgres
// on PostgreSQL, where claims skip the rows a batch locks, and what slows
// them beside an action is the disk its writes share (docs/performance.md),
// which smaller batches did not spare them.
const (
	DefaultBulkBatchSize         = 20
	DefaultBulkBatchSizePostgres = 5000
)

// bulkStates are the states each action acts on, and the default filter.
var bulkStates = map[BulkAction][]JobState{
	BulkRetry:  {StateFailed, StateCancelled},
	BulkCancel: {StatePending, StateScheduled, StateWaiting, StatePaused, StateRunning},
	BulkDelete: {StateCompleted, StateFailed, StateCancelled},
	BulkPause:  {StatePending, StateScheduled, StateWaiting, StateRunning},
	BulkResume: {StatePaused},
}

// bulkLive are the actions on live jobs; the others act on the archive.
var bulkLive = map[BulkAction]bool{BulkCancel: true, BulkPause: true, BulkResume: true}

// BulkFilter picks jobs: every field set must match; a list matches any of
// its values. OlderThan compares a live job's creation time (cancel, pause,
// resume) or a finished job's finish time (retry, delete) with now. The
// other fields match as JobListParams's of the same names do.
type BulkFilter struct {
	States    []JobState
	Kinds     []string
	Queues    []string
	Tenant    *string
	OlderThan time.Duration
	// ErrorType: jobs with an attempt error of this type (any attempt).
	ErrorType string
	// ErrorMessage: jobs with an attempt error whose message holds this
	// text, letters compared without case.
	ErrorMessage string
	// IDs: exactly these jobs (those of them the other fields pick).
	IDs []int64
	// Payload and Metadata: jobs whose payload (keys a.b reach into
	// objects) and metadata have each key with this value, compared as JSON.
	Payload  map[string]any
	Metadata map[string]any
}

// Empty answers whether the filter picks every job.
func (f BulkFilter) Empty() bool {
	return len(f.States) == 0 && len(f.Kinds) == 0 && len(f.Queues) == 0 && f.Tenant == nil && f.OlderThan == 0 &&
		f.ErrorType == "" && f.ErrorMessage == "" && len(f.IDs) == 0 && len(f.Payload) == 0 && len(f.Metadata) == 0
}

// MaxBulkIDs is the most job ids a BulkFilter may name.
const MaxBulkIDs = 10000

// BulkParams is one JobsBulk call.
type BulkParams struct {
	Action BulkAction
	// Filter must set at least one field: JobsBulk refuses to act on
	// every job.
	Filter BulkFilter
	// DryRun counts the jobs the filter picks and changes nothing.
	DryRun bool
	// BatchSize, 0 for the driver's default (DefaultBulkBatchSize).
	BatchSize int
	// Progress, when set, hears the count of jobs acted on (or counted)
	// so far after each batch.
	Progress func(done int)
}

// BulkResult counts the jobs the filter picked and those acted on; a job
// that changed state meanwhile (another worker finished it, a live job
// holds its key) is matched but not done.
type BulkResult struct {
	Matched int
	Done    int
}

// bulkPage is about how many ids JobsBulk selects at a time (a whole
// number of batches); it acts on them a batch at a time. Selected a batch at
// a time, the selection cost SQLite two parses of the filter statement per
// batch (planned again for each binding of its parameters, which meet
// indexed columns): with batches of 50 that was a third of a bulk action's
// CPU. A job that leaves the filter before its batch (a paused job resumed,
// a finished job retried and finished again) is left alone: each batch's
// statement checks the filter's states and finish time again (driver.Chunk).
const bulkPage = 1000

// JobsBulk retries, cancels, deletes, pauses or resumes every job a filter
// picks, a batch at a time; see BulkAction for the states each acts on.
func (c *Client) JobsBulk(ctx context.Context, p BulkParams) (BulkResult, error) {
	sel, err := bulkSelect(p)
	if err != nil {
		return BulkResult{}, err
	}
	batch := sel.Limit
	if batch == 0 {
		batch = DefaultBulkBatchSize
		if c.driver.Name() == "postgres" {
			batch = DefaultBulkBatchSizePostgres
		}
	}
	sel.Limit = batch * ((bulkPage + batch - 1) / batch)
	var res BulkResult
	for {
		ids, err := c.bulkNextPage(ctx, sel, p, batch, &res)
		if err != nil || len(ids) < sel.Limit {
			if err == nil && p.DryRun {
				res.Done = 0
			}
			return res, err
		}
		sel.AfterID = ids[len(ids)-1]
	}
}

// bulkNextPage selects the next page of jobs and acts on them a batch at a
// time, counting them in res; between batches, a caller that went away
// stops the action.
func (c *Client) bulkNextPage(ctx context.Context, sel driver.SelectParams, p BulkParams, batch int, res *BulkResult) ([]int64, error) {
	stopped := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s jobs: stopped after %d: %w", p.Action, res.Done, err)
		}
		return nil
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	ids, err := c.driver.JobSelect(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("select jobs to %s: %w", p.Action, err)
	}
	for start := 0; start < len(ids); start += batch {
		if err := stopped(); start > 0 && err != nil {
			return nil, err
		}
		chunk := ids[start:min(start+batch, len(ids))]
		res.Matched += len(chunk)
		if p.DryRun {
			res.Done += len(chunk)
		} else {
			n, err := c.bulkAct(ctx, p.Action, bulkChunk(p, sel, chunk))
			res.Done += n
			if err != nil {
				return nil, fmt.Errorf("%s jobs: %w", p.Action, err)
			}
		}
		if p.Progress != nil {
			p.Progress(res.Done)
		}
	}
	return ids, nil
}

// Check answers the error JobsBulk would answer for p's parameters, before
// it acts on any job: a *ValidationError naming the field.
func (p BulkParams) Check() error {
	_, err := bulkSelect(p)
	return err
}

// bulkSelect checks p and answers the first page's selection.
func bulkSelect(p BulkParams) (driver.SelectParams, error) {
	allowed, ok := bulkStates[p.Action]
	if !ok {
		return driver.SelectParams{}, invalid("action", "must be retry, cancel, delete, pause or resume, got %q", p.Action)
	}
	f := p.Filter
	if f.Empty() {
		return driver.SelectParams{}, invalid("filter", "name at least one of state, kind, queue, tenant, older_than, error_type, error_message, ids, payload, metadata: an empty filter would pick every job")
	}
	if f.OlderThan < 0 {
		return driver.SelectParams{}, invalid("older_than", "must not be negative")
	}
	if err := f.checkTexts(); err != nil {
		return driver.SelectParams{}, err
	}
	if p.BatchSize < 0 || p.BatchSize > 10000 {
		return driver.SelectParams{}, invalid("batch_size", "must be between 1 and 10000, got %d", p.BatchSize)
	}
	for _, s := range f.States {
		if !slices.Contains(allowed, s) {
			return driver.SelectParams{}, invalid("state", "%s acts on %s jobs, not %q", p.Action, stateList(allowed), s)
		}
	}
	sel := driver.SelectParams{Archived: !bulkLive[p.Action], States: f.States, Kinds: f.Kinds,
		Queues: f.Queues, Tenant: f.Tenant, Limit: p.BatchSize, IDs: f.IDs, Metadata: f.Metadata,
		Payload: f.Payload, ErrorType: f.ErrorType, ErrorMessage: f.ErrorMessage}
	if len(sel.States) == 0 {
		sel.States = allowed
	}
	if f.OlderThan > 0 {
		sel.Before = time.Now().Add(-f.OlderThan)
	}
	return sel, nil
}

// checkTexts refuses a kind, queue, tenant or error text no job can have
// and no database compares (a NUL, invalid UTF-8), as a listing's filters
// do (input.CheckText): PostgreSQL would refuse it as a failure of its
// own; and ids, payload and metadata keys as a listing's (checkJSONFilters).
func (f BulkFilter) checkTexts() error {
	if len(f.IDs) > MaxBulkIDs {
		return invalid("ids", "at most %d ids, got %d", MaxBulkIDs, len(f.IDs))
	}
	for i, id := range f.IDs {
		if id <= 0 {
			return invalid(fmt.Sprintf("ids[%d]", i), "must be a positive job id, got %d", id)
		}
	}
	if err := checkErrorFilters(f.ErrorType, f.ErrorMessage); err != nil {
		return err
	}
	if err := checkJSONFilters(f.Metadata, f.Payload); err != nil {
		return err
	}
	for i, k := range f.Kinds {
		if err := input.CheckText(fmt.Sprintf("kind[%d]", i), k, input.MaxKeyBytes); err != nil {
			return inputError(err)
		}
	}
	for i, q := range f.Queues {
		if err := input.CheckText(fmt.Sprintf("queue[%d]", i), q, input.MaxKeyBytes); err != nil {
			return inputError(err)
		}
	}
	if f.Tenant != nil {
		return inputError(input.CheckText("tenant", *f.Tenant, input.MaxNameBytes))
	}
	return nil
}

func stateList(states []JobState) string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// bulkChunk answers a batch of ids with what p's filter asks of a job
// that can change before the batch is acted on: its states, and for the
// archive's actions its finish time (sel.Before). Kinds, queues, tenant,
// creation time, payload and metadata a job keeps, and its errors only
// grow.
func bulkChunk(p BulkParams, sel driver.SelectParams, ids []int64) driver.Chunk {
	c := driver.Chunk{IDs: ids, States: p.Filter.States}
	if !bulkLive[p.Action] {
		c.FinishedBefore = sel.Before
	}
	return c
}

// bulkAct acts on one batch, set-based: one transaction of the driver's
// applies the single action's statements to the whole batch, then running
// jobs hear of it, queues wake and events go out as the single action sends
// them. It answers how many jobs it changed.
func (c *Client) bulkAct(ctx context.Context, action BulkAction, batch driver.Chunk) (int, error) {
	if len(batch.IDs) == 0 {
		return 0, nil
	}
	var jobs []*JobRow
	var err error
	switch action {
	case BulkDelete:
		gone, err := c.driver.JobDeleteArchived(ctx, batch)
		return len(gone), err
	case BulkRetry:
		jobs, err = c.retryMany(ctx, batch)
	case BulkResume:
		jobs, err = c.driver.JobResumeMany(ctx, batch)
	case BulkCancel:
		jobs, err = c.driver.JobCancelMany(ctx, batch)
	case BulkPause:
		jobs, err = c.driver.JobPauseMany(ctx, batch)
	}
	if err != nil {
		return 0, err
	}
	c.bulkDone(ctx, action, jobs)
	return len(jobs), nil
}

// bulkDone tells of a batch what the single actions tell of each job:
// running jobs asked to stop hear it, a cancelled job is an event, and the
// queues of jobs made runnable wake.
func (c *Client) bulkDone(ctx context.Context, action BulkAction, jobs []*JobRow) {
	var queues []string
	for _, j := range jobs {
		switch {
		case j.State == StateRunning && action == BulkCancel:
			c.notifyStop(ctx, j.ID, ErrCancelled)
		case j.State == StateRunning && action == BulkPause:
			c.notifyStop(ctx, j.ID, ErrPaused)
		case j.State == StateCancelled:
			c.events.emitJob(EventJobCancelled, j, "", nil)
		case action == BulkRetry || action == BulkResume:
			if !slices.Contains(queues, j.Queue) {
				queues = append(queues, j.Queue)
			}
		}
	}
	if len(queues) > 0 {
		_ = c.wake.insertDone(c.driver, queues, true) // committed: no error to answer
	}
}

// retryMany is the driver's JobRetryMany; under flow rules the jobs, back
// from the archive (which keeps no keys), get their keys again in the same
// transaction, as jobRetry gives them.
func (c *Client) retryMany(ctx context.Context, batch driver.Chunk) ([]*JobRow, error) {
	if len(c.config.Flow) == 0 && !c.contractSet().HasFlow() {
		return c.driver.JobRetryMany(ctx, batch)
	}
	var jobs []*JobRow
	err := c.inTx(ctx, func(tx driver.Executor) error {
		bulk, err := driver.As[driver.BulkStore](tx)
		if err != nil {
			return err
		}
		if jobs, err = bulk.JobRetryMany(ctx, batch); err != nil {
			return err
		}
		var tagged []int64
		var keys []*driver.FlowKeys
		for _, j := range jobs {
			k, err := c.flowKeys(&driver.InsertParams{Kind: j.Kind, Op: j.Op, Queue: j.Queue, Tenant: j.Tenant, Payload: j.Payload})
			if err != nil {
				return err
			}
			if k != nil {
				tagged, keys = append(tagged, j.ID), append(keys, k)
			}
		}
		if len(tagged) == 0 {
			return nil
		}
		store, err := driver.As[driver.FlowStore](tx)
		if err != nil {
			return err
		}
		return store.FlowTag(ctx, tagged, keys)
	})
	return jobs, err
}
