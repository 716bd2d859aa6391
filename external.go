package skiplock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
	"github.com/skiplock/skiplock/internal/input"
)

// The worker protocol for workers outside this process (the HTTP server
// speaks it for workers in any language). A worker names itself with a
// worker id; every report is fenced on it and on the job's attempt: the
// one the report names (the attempt it claimed), else the current one.

// ClaimParams asks for jobs of a queue for an external worker.
type ClaimParams struct {
	Queue    string
	WorkerID string
	Max      int
	// Lease of the claimed jobs (default: each job's kind's lease, from its
	// worker options or contract, else Config.Lease).
	Lease time.Duration
	// Kinds limits the claim; empty means any kind.
	Kinds []string
	// Tenant, when set, limits the claim to that tenant's jobs.
	Tenant *string
	// Wait, when set, makes Claim wait up to that long for jobs while the
	// queue has none (a long poll): it claims again at each wake-up of the
	// queue (see KeepListening), and every Recheck (default 1 s) without one.
	Wait, Recheck time.Duration
}

// DefaultClaimRecheck is how often a waiting Claim looks for jobs when no
// wake-up comes.
const DefaultClaimRecheck = time.Second

// Claim claims up to Max pending jobs of a queue for an external worker,
// waiting up to p.Wait for some while there are none. Each claim runs to
// its end even when ctx ends meanwhile (cancelled half way, a claim that
// committed would leave its jobs to the rescuer): jobs it answers with
// ctx ended are the caller's to hand back (HandBack). While it waits, the
// end of ctx answers ctx.Err(). The same worker's claims in flight at once
// share one statement (external_gather.go).
func (c *Client) Claim(ctx context.Context, p ClaimParams) ([]*JobRow, error) {
	_, jobs, err := c.CompleteAndClaim(ctx, nil, p)
	return jobs, err
}

// CompleteAndClaim reports jobs an external worker finished and claims its
// next ones in one transaction: a worker that reports its last jobs with
// its next claim makes one call and one commit a round instead of two.
// done is reported as CompleteMany reports it (each job fenced on
// p.WorkerID and its attempt; a refused one holds the others back
// neither), and its outcomes come in order; it may be empty. The claim is
// Claim's, and runs after the reports in the same transaction: an error
// before the first claim answered stores none of the reports. A claim
// that then waits for jobs (p.Wait) waits with the reports stored: when
// ctx ends meanwhile, it answers their outcomes with ctx.Err().
func (c *Client) CompleteAndClaim(ctx context.Context, done []CompleteManyItem, p ClaimParams) ([]CompleteManyResult, []*JobRow, error) {
	if p.Wait < 0 {
		return nil, nil, invalid("wait_seconds", "must not be negative")
	}
	if len(done) > 0 {
		if err := checkCompleteMany("complete", p.WorkerID, done); err != nil {
			return nil, nil, err
		}
	}
	// The kinds' leases follow the stored contract set.
	if err := c.LoadContracts(ctx); err != nil {
		return nil, nil, err
	}
	cp, err := c.claimParams(p)
	if err != nil {
		return nil, nil, err
	}
	cp.Flow = c.flowClaims(p.Queue)
	var results []CompleteManyResult
	var reports []driver.CompleteParams
	if len(done) > 0 {
		if results, reports, err = c.heldReports(ctx, p.WorkerID, done); err != nil {
			return nil, nil, err
		}
	}
	return c.claimWaiting(ctx, p, cp, results, reports)
}

// claimWaiting reports and claims, then, while no job came and p.Wait
// allows, claims again at each wake-up of the queue or every p.Recheck.
func (c *Client) claimWaiting(ctx context.Context, p ClaimParams, cp driver.ClaimParams, results []CompleteManyResult,
	reports []driver.CompleteParams) ([]CompleteManyResult, []*JobRow, error) {
	place := c.claimPlaces.of(p.Queue, p.Tenant, p.Kinds)
	deadline := time.Now().Add(p.Wait)
	recheck := p.Recheck
	if recheck <= 0 {
		recheck = DefaultClaimRecheck
	}
	// Only a claim that may wait takes the queue's channel, and the last
	// one to stop waiting drops it: a channel kept for each queue name ever
	// claimed would only grow.
	if p.Wait > 0 {
		c.pollers.join(p.Queue)
		defer c.pollers.leave(p.Queue)
	}
	for {
		var woken <-chan struct{}
		if p.Wait > 0 {
			woken = c.pollers.wait(p.Queue)
		}
		finished, jobs, err := c.claimGathered(context.WithoutCancel(ctx), place, cp, reports)
		if err != nil {
			return nil, nil, err
		}
		if reports != nil {
			c.settleReports(ctx, results, finished)
			reports = nil // stored: the claims that wait carry none
		}
		left := time.Until(deadline)
		if len(jobs) > 0 || left <= 0 {
			return results, jobs, nil
		}
		t := time.NewTimer(min(left, recheck))
		select {
		case <-woken:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return results, nil, ctx.Err()
		}
		t.Stop()
	}
}

// claimParams checks a claim and answers the driver's parameters.
func (c *Client) claimParams(p ClaimParams) (driver.ClaimParams, error) {
	switch {
	case p.Queue == "":
		return driver.ClaimParams{}, invalid("queue", "must not be empty")
	case p.WorkerID == "" || len(p.WorkerID) > 200:
		return driver.ClaimParams{}, invalid("worker_id", "must be 1 to 200 characters")
	case p.Max < 1 || p.Max > 1000:
		return driver.ClaimParams{}, invalid("max", "must be between 1 and 1000, got %d", p.Max)
	case p.Lease < 0:
		return driver.ClaimParams{}, invalid("lease_seconds", "must not be negative")
	}
	cp := driver.ClaimParams{Queue: p.Queue, WorkerID: p.WorkerID, Max: p.Max, Kinds: p.Kinds,
		DefaultLease: p.Lease, Tenant: p.Tenant, Fair: c.config.fairShare(p.Queue)}
	if p.Lease == 0 {
		kl := c.kindLeases()
		cp.DefaultLease, cp.LeaseKinds, cp.Leases = c.config.Lease, kl.kinds, kl.leases
		if cp.LeaseKinds == nil {
			cp.LeaseKinds = []string{} // not Kinds: the kinds filter has no leases
		}
	}
	return cp, nil
}

// HandBack returns jobs claimed for an external worker that never received
// them (it went away while its claim ran) to pending, their attempts
// unspent, and wakes their queues; a job asked to cancel ends cancelled,
// one asked to pause is paused (outcome.Decide). A job that cannot go back
// keeps its lease until the rescuer takes it.
func (c *Client) HandBack(ctx context.Context, jobs []*JobRow) error {
	var errs []error
	var queues []string
	for _, j := range jobs {
		held := driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: j.WorkerID, Queue: j.Queue}
		back, err := outcome.SnoozeJob(ctx, c.driver, driver.SnoozeParams{HeldJob: held, RunAt: time.Now()})
		if err != nil {
			errs = append(errs, fmt.Errorf("hand back job %d: %w", j.ID, err))
			continue
		}
		if back.State == StatePending && !slices.Contains(queues, back.Queue) {
			queues = append(queues, back.Queue)
		}
	}
	if len(queues) > 0 {
		c.wake.insertDone(c.driver, queues, true)
	}
	return errors.Join(errs...)
}

// held fences a report of workerID on job id. A report that names its
// attempt is fenced on it as is (the driver's statement refuses any other),
// without a read; otherwise the job must be running under that worker (and
// in queue, when given) and its current attempt joins the fence. queue,
// the job's as the claim answered it, names its shard on Citus, where a
// wrong one finds no job held there (ErrLeaseLost).
func (c *Client) held(ctx context.Context, id int64, workerID string, attempt int, queue string) (driver.HeldJob, error) {
	if err := checkAttempt("attempt", attempt); err != nil {
		return driver.HeldJob{}, err
	}
	if attempt > 0 {
		return driver.HeldJob{ID: id, Attempt: attempt, WorkerID: workerID, Queue: queue}, nil
	}
	j, err := c.driver.JobGet(ctx, id)
	if err != nil {
		return driver.HeldJob{}, err
	}
	if j.State != StateRunning || j.WorkerID != workerID || (queue != "" && j.Queue != queue) {
		return driver.HeldJob{}, leaseLost(j)
	}
	return driver.HeldJob{ID: id, Attempt: j.Attempt, WorkerID: workerID, Queue: j.Queue}, nil
}

// checkAttempt checks a report's attempt, field naming it: 0 when not
// given, else the claimed job's (input.Attempt).
func checkAttempt(field string, attempt int) error {
	if attempt == 0 {
		return nil
	}
	return inputError(input.Attempt(field, attempt))
}

// refused explains a report the fence refused: an unknown job is not
// found, a known one says who holds it now. Other errors pass.
func (c *Client) refused(ctx context.Context, id int64, err error) error {
	if !errors.Is(err, ErrLeaseLost) {
		return err
	}
	j, gerr := c.driver.JobGet(ctx, id)
	switch {
	case errors.Is(gerr, ErrNotFound):
		return gerr
	case gerr != nil:
		return err
	}
	return leaseLost(j)
}

func leaseLost(j *JobRow) error {
	return fmt.Errorf("%w (job %d is %s, attempt %d, held by %q)", ErrLeaseLost, j.ID, j.State, j.Attempt, j.WorkerID)
}

// HeartbeatParams is an external worker's report on a running job.
type HeartbeatParams struct {
	WorkerID string
	// Attempt is the claimed job's attempt; when set (> 0), a report for
	// any other attempt is refused (ErrLeaseLost), even from WorkerID.
	Attempt int
	// Queue is the job's queue as the claim answered it ("" when not
	// known). On a schema distributed on Citus it sends the report to that
	// queue's shard alone; a queue that is not the job's answers
	// ErrLeaseLost there. Elsewhere it is checked only when the report has
	// no Attempt (the job is read then).
	Queue string
	// Lease extends the lease from now (default: the job's kind's lease,
	// from its worker options or contract, else Config.Lease).
	Lease           time.Duration
	Progress        *int
	ProgressMessage *string
	Checkpoint      json.RawMessage
}

// HeartbeatResult answers a heartbeat: the new lease and whether the job
// was asked to cancel or to pause.
type HeartbeatResult = driver.HeartbeatResult

// Heartbeat extends a job's lease and records progress and checkpoint.
func (c *Client) Heartbeat(ctx context.Context, id int64, p HeartbeatParams) (*HeartbeatResult, error) {
	if p.Progress != nil && (*p.Progress < 0 || *p.Progress > 100) {
		return nil, invalid("progress", "must be between 0 and 100, got %d", *p.Progress)
	}
	if len(p.Checkpoint) > 0 && !json.Valid(p.Checkpoint) {
		return nil, invalid("checkpoint", "must be valid JSON")
	}
	if p.ProgressMessage != nil {
		if err := input.CheckText("progress_message", *p.ProgressMessage, input.MaxProgressBytes); err != nil {
			return nil, inputError(err)
		}
	}
	h, err := c.held(ctx, id, p.WorkerID, p.Attempt, p.Queue)
	if err != nil {
		return nil, err
	}
	pp := driver.ProgressParams{HeldJob: h, Progress: p.Progress, ProgressMessage: p.ProgressMessage,
		Checkpoint: p.Checkpoint, Lease: p.Lease}
	if p.Lease <= 0 {
		if err := c.LoadContracts(ctx); err != nil {
			return nil, err
		}
		// The statement looks the job's kind up: no read before it.
		kl := c.kindLeases()
		pp.Lease, pp.LeaseKinds, pp.Leases = c.config.Lease, kl.kinds, kl.leases
	}
	res, err := c.driver.JobProgress(ctx, pp)
	if err != nil {
		return nil, c.refused(ctx, id, err)
	}
	return res, nil
}

// CompleteParams is an external worker's report of a finished job.
type CompleteParams struct {
	WorkerID string
	// Attempt is the claimed job's attempt; when set (> 0), a report for
	// any other attempt is refused (ErrLeaseLost), even from WorkerID.
	Attempt int
	// Queue is the job's queue, as HeartbeatParams.Queue.
	Queue  string
	Result json.RawMessage
	// Next are next-stage jobs, inserted in the completion's transaction;
	// they inherit the job's workflow id and tenant unless they set theirs.
	Next []InsertManyParams
}

// Complete finishes a running job with its result and inserts its next
// stages in the same transaction. A job asked to cancel ends cancelled.
func (c *Client) Complete(ctx context.Context, id int64, p CompleteParams) (*JobRow, []*InsertResult, error) {
	if len(p.Result) > 0 && !json.Valid(p.Result) {
		return nil, nil, invalid("result", "must be valid JSON")
	}
	h, err := c.held(ctx, id, p.WorkerID, p.Attempt, p.Queue)
	if err != nil {
		return nil, nil, err
	}
	cp := driver.CompleteParams{HeldJob: h, Result: p.Result}
	if len(p.Next) == 0 {
		// The fenced statement answers the finished job: one round trip.
		row, err := c.driver.JobComplete(ctx, cp)
		if err != nil {
			return nil, nil, c.refused(ctx, id, err)
		}
		c.history.recordReported(row)
		return row, nil, nil
	}
	if err := c.LoadContracts(ctx); err != nil {
		return nil, nil, err
	}
	nexts := make([]nextJob, len(p.Next))
	for i, n := range p.Next {
		nexts[i] = nextJob{args: n.Args, opts: n.Opts}
	}
	var row *JobRow
	var out []*InsertResult
	err = c.inTx(ctx, func(tx driver.Executor) error {
		var err error
		if row, err = tx.JobComplete(ctx, cp); err != nil || row.State == StateCancelled {
			return err // a job asked to cancel ends cancelled and starts no next stage
		}
		res, err := c.insertNext(ctx, tx, row, nexts)
		for _, r := range res {
			out = append(out, &InsertResult{Job: r.Job, Duplicate: r.Duplicate})
		}
		return err
	})
	if err != nil {
		return nil, nil, c.refused(ctx, id, err)
	}
	c.history.recordReported(row)
	return row, out, nil
}

// InsertBatch enqueues jobs all or nothing and answers each job (or the
// live one its key matched), in order.
func (c *Client) InsertBatch(ctx context.Context, jobs []InsertManyParams) ([]*InsertResult, error) {
	if err := c.LoadContracts(ctx); err != nil {
		return nil, err
	}
	params := make([]*driver.InsertParams, len(jobs))
	queues := make([]string, len(jobs))
	for i, j := range jobs {
		p, err := c.insertParams(j.Args, j.Opts)
		if err != nil {
			if ve, ok := err.(*ValidationError); ok {
				return nil, &ValidationError{Field: fmt.Sprintf("jobs[%d].%s", i, ve.Field), Message: ve.Message}
			}
			return nil, err
		}
		params[i], queues[i] = p, p.Queue
	}
	var res []driver.InsertResult
	err := c.insertThrough(ctx, params, func(ctx context.Context) ([]int64, []bool, error) {
		err := c.inTx(ctx, func(tx driver.Executor) error {
			var err error
			res, err = tx.JobInsertMany(ctx, params)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		ids, dups := insertResultIDs(res)
		return ids, dups, nil
	})
	if err != nil {
		return nil, err
	}
	c.wake.insertDone(c.driver, queues, true)
	out := make([]*InsertResult, len(res))
	for i, r := range res {
		out[i] = &InsertResult{Job: r.Job, Duplicate: r.Duplicate}
	}
	return out, nil
}
