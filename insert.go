package skiplock

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/input"
)

// InsertOpts are a job's options; zero values take the kind's contract,
// then the defaults.
type InsertOpts struct {
	Queue string
	// Priority 0–10, higher first; nil means the default (5).
	Priority *int
	// RunAt, or Delay from now (not both), schedules the job for later.
	// Either time must lie from 1970 to the end of 9999 in UTC.
	RunAt time.Time
	Delay time.Duration
	// MaxRetries after the first attempt; nil means the default (3).
	MaxRetries *int
	Tags       []string
	Metadata   json.RawMessage
	Tenant     string
	Op         string
	// IdempotencyKey makes a second insert while the first job is live
	// return that job (InsertResult.Duplicate).
	IdempotencyKey string
	// DependsOn makes the job wait until every named job completed.
	DependsOn []int64
	// RunOnParentFailure lets the job run when a parent fails or is
	// cancelled, instead of being cancelled with it.
	RunOnParentFailure bool
	WorkflowID, Stage  string
}

// Int returns a pointer to v, for InsertOpts.Priority and MaxRetries.
func Int(v int) *int { return &v }

// InsertResult is the inserted job, or the live one its key matched.
type InsertResult struct {
	Job       *JobRow
	Duplicate bool
}

// InsertManyParams is one job of InsertMany.
type InsertManyParams struct {
	Args JobArgs
	Opts *InsertOpts
}

// Insert enqueues one job. Through a started client that works the job's
// queue and kind, with a free slot and no backlog there, a plain job due now
// starts at its insert, in this client: res.Job.State is then running
// (docs/jobs.md, "Start at insert").
func (c *Client) Insert(ctx context.Context, args JobArgs, opts *InsertOpts) (*InsertResult, error) {
	return c.insertOn(ctx, c.driver, args, opts, true)
}

// InsertTx enqueues one job inside the caller's transaction (a pgx.Tx on
// PostgreSQL, a *sql.Tx on SQLite): if it rolls back, there is no job.
func (c *Client) InsertTx(ctx context.Context, tx any, args JobArgs, opts *InsertOpts) (*InsertResult, error) {
	exec, err := c.driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	return c.insertOn(ctx, exec, args, opts, false)
}

func (c *Client) insertOn(ctx context.Context, exec driver.Executor, args JobArgs, opts *InsertOpts, committed bool) (*InsertResult, error) {
	if err := c.LoadContracts(ctx); err != nil {
		return nil, err
	}
	p, err := c.insertParams(args, opts)
	if err != nil {
		return nil, err
	}
	var out *InsertResult
	err = c.insertThrough(ctx, []*driver.InsertParams{p}, func(ctx context.Context) ([]int64, []bool, error) {
		var err error
		out, err = c.insertOne(ctx, exec, p, committed)
		if err != nil {
			return nil, nil, err
		}
		return []int64{out.Job.ID}, []bool{out.Duplicate}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Client) insertOne(ctx context.Context, exec driver.Executor, p *driver.InsertParams, committed bool) (*InsertResult, error) {
	if committed {
		if prod := c.startsAtInsert(p); prod != nil {
			return c.insertAndStart(ctx, prod, p)
		}
	}
	// Committed at once: its wake-up, when due, is committed with it.
	p.Wake = committed && c.wake.takeDue(p.Queue)
	res, err := exec.JobInsertMany(ctx, []*driver.InsertParams{p})
	if p.Wake {
		c.wake.carried(p.Queue, err == nil, err == nil && res[0].Woken)
	}
	if err != nil {
		return nil, fmt.Errorf("insert job of kind %q: %w", p.Kind, err)
	}
	if !p.Wake {
		if err := c.wake.insertDone(exec, []string{p.Queue}, committed); err != nil {
			return nil, fmt.Errorf("insert job of kind %q: %w", p.Kind, err)
		}
	}
	return &InsertResult{Job: res[0].Job, Duplicate: res[0].Duplicate}, nil
}

// startsAtInsert answers the producer that will run p as soon as it is
// inserted, its slot reserved, or nil. A job starts at its insert when this
// client works its queue and kind and has a free slot and no backlog there,
// and the job is plain (no key, no dependencies) and due now: it then skips
// the wake-up and the claim, a round trip to the database.
func (c *Client) startsAtInsert(p *driver.InsertParams) *producer {
	if !p.Plain() || p.Paused || p.Flow != nil || !p.RunAt.IsZero() && p.RunAt.After(time.Now()) {
		return nil
	}
	ps := c.producers.Load()
	if ps == nil {
		return nil
	}
	prod := (*ps)[p.Queue]
	if prod == nil || !prod.works(p.Kind) || !prod.reserve() {
		return nil
	}
	return prod
}

// insertAndStart inserts p running on this client, in the slot reserved on
// prod, and hands it to a job goroutine. A job that the database did not
// start (its queue is paused) waits for a claim like any other.
func (c *Client) insertAndStart(ctx context.Context, prod *producer, p *driver.InsertParams) (*InsertResult, error) {
	row, err := c.driver.JobInsertStart(ctx, p, driver.StartParams{WorkerID: c.config.ID, Lease: c.policies[p.Kind].lease})
	if err != nil {
		prod.release()
		return nil, fmt.Errorf("insert job of kind %q: %w", p.Kind, err)
	}
	// The caller gets its own copy: the job goroutine owns row.
	res := &InsertResult{Job: new(JobRow)}
	*res.Job = *row
	if row.State != StateRunning || row.WorkerID != c.config.ID {
		prod.release()
		c.wake.insertDone(c.driver, []string{p.Queue}, true)
		return res, nil
	}
	if !prod.startInserted(row) {
		// The client stopped while the insert was in flight.
		prod.active.Add(-1)
		if back := c.handBack(&runningJob{client: c, row: row}); back != nil {
			*res.Job = *back
		}
	}
	return res, nil
}

// InsertMany enqueues many jobs at once (COPY on PostgreSQL) and answers
// their ids in order. Jobs with idempotency keys or dependencies take the
// careful path; a duplicate answers the id of the live job.
func (c *Client) InsertMany(ctx context.Context, jobs []InsertManyParams) ([]int64, error) {
	return c.insertMany(ctx, c.driver, jobs, true)
}

// InsertManyTx is InsertMany inside the caller's transaction.
func (c *Client) InsertManyTx(ctx context.Context, tx any, jobs []InsertManyParams) ([]int64, error) {
	exec, err := c.driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	return c.insertMany(ctx, exec, jobs, false)
}

func (c *Client) insertMany(ctx context.Context, exec driver.Executor, jobs []InsertManyParams, committed bool) ([]int64, error) {
	if err := c.LoadContracts(ctx); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	params := make([]*driver.InsertParams, len(jobs))
	block := make([]driver.InsertParams, len(jobs)) // one allocation for the batch
	careful := false
	queues := map[string]bool{}
	for i, j := range jobs {
		p := &block[i]
		if err := c.fillInsertParams(p, j.Args, j.Opts); err != nil {
			return nil, fmt.Errorf("jobs[%d]: %w", i, err)
		}
		params[i] = p
		careful = careful || p.IdempotencyKey != "" || len(p.DependsOn) > 0
		queues[p.Queue] = true
	}
	var ids []int64
	err := c.insertThrough(ctx, params, func(ctx context.Context) ([]int64, []bool, error) {
		if !careful {
			var err error
			if ids, err = exec.JobInsertFast(ctx, params); err != nil {
				return nil, nil, insertManyError(len(jobs), err)
			}
			return ids, nil, nil
		}
		res, err := exec.JobInsertMany(ctx, params)
		if err != nil {
			return nil, nil, insertManyError(len(jobs), err)
		}
		var dups []bool
		ids, dups = insertResultIDs(res)
		return ids, dups, nil
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(queues))
	for q := range queues {
		names = append(names, q)
	}
	if err := c.wake.insertDone(exec, names, committed); err != nil {
		return nil, err
	}
	return ids, nil
}

// insertParams validates a job and applies its contract and the defaults.
func (c *Client) insertParams(args JobArgs, opts *InsertOpts) (*driver.InsertParams, error) {
	p := new(driver.InsertParams)
	if err := c.fillInsertParams(p, args, opts); err != nil {
		return nil, err
	}
	return p, nil
}

// fillInsertParams is insertParams writing into p.
func (c *Client) fillInsertParams(p *driver.InsertParams, args JobArgs, opts *InsertOpts) error {
	if args == nil {
		return invalid("args", "must not be nil")
	}
	if opts == nil {
		opts = &InsertOpts{}
	}
	payload, err := json.Marshal(args)
	if err != nil {
		return invalid("payload", "cannot encode %T as JSON: %v", args, err)
	}
	if err := checkInsertOpts(args.Kind(), opts); err != nil {
		return err
	}
	if err := input.CheckStored("payload", payload); err != nil {
		return inputError(err)
	}
	res, err := c.resolve(args.Kind(), payload, opts)
	if err != nil {
		return err
	}
	*p = driver.InsertParams{
		Kind: args.Kind(), Op: opts.Op, Queue: res.Queue, Tenant: opts.Tenant, Priority: res.Priority,
		MaxRetries: res.MaxRetries, Payload: payload, Metadata: opts.Metadata, Tags: opts.Tags,
		RunAt: opts.RunAt, IdempotencyKey: res.IdempotencyKey, UniquePolicy: res.UniquePolicy,
		UniqueWindow: res.UniqueWindow, DependsOn: opts.DependsOn, RunOnParentFailure: opts.RunOnParentFailure,
		WorkflowID: opts.WorkflowID, Stage: opts.Stage,
	}
	if p.Flow, err = c.flowKeys(p); err != nil {
		return err
	}
	if p.RunAt.IsZero() && opts.Delay > 0 {
		p.RunAt = time.Now().Add(opts.Delay)
		return checkTime("delay", p.RunAt)
	}
	return nil
}

// checkInsertOpts is the bounds check of every job, whoever sends it (a Go
// caller, a job spec of the HTTP API or the command line): values in
// range, text that every database stores (valid UTF-8, no NUL, bounded),
// metadata that is valid JSON within the depth limit.
func checkInsertOpts(kind string, opts *InsertOpts) error {
	switch {
	case kind == "":
		return invalid("kind", "must not be empty")
	case opts.Priority != nil && (*opts.Priority < 0 || *opts.Priority > 10):
		return invalid("priority", "must be between 0 and 10, got %d", *opts.Priority)
	case opts.MaxRetries != nil && (*opts.MaxRetries < 0 || *opts.MaxRetries > input.MaxMaxRetries):
		return invalid("max_retries", "must be between 0 and %d, got %d", input.MaxMaxRetries, *opts.MaxRetries)
	case opts.Delay < 0:
		return invalid("delay", "must not be negative")
	case opts.Delay > 0 && !opts.RunAt.IsZero():
		return invalid("delay", "set RunAt or Delay, not both")
	case len(opts.Tags) > input.MaxTags:
		return invalid("tags", "must have at most %d tags, got %d", input.MaxTags, len(opts.Tags))
	case len(opts.DependsOn) > input.MaxDependsOn:
		return invalid("depends_on", "must name at most %d jobs, got %d", input.MaxDependsOn, len(opts.DependsOn))
	}
	if err := checkTexts(kind, opts); err != nil {
		return err
	}
	if len(opts.Metadata) > 0 {
		if _, err := input.CleanJSON("metadata", opts.Metadata); err != nil {
			return inputError(err)
		}
	}
	if !opts.RunAt.IsZero() {
		if err := checkTime("run_at", opts.RunAt); err != nil {
			return err
		}
	}
	for i, id := range opts.DependsOn {
		if id <= 0 {
			return invalid(fmt.Sprintf("depends_on[%d]", i), "must be a positive job id, got %d", id)
		}
	}
	return nil
}

// checkTexts bounds a job's names and keys.
func checkTexts(kind string, opts *InsertOpts) error {
	for _, t := range []struct {
		field, v string
		max      int
	}{{"kind", kind, input.MaxNameBytes}, {"op", opts.Op, input.MaxNameBytes}, {"queue", opts.Queue, input.MaxNameBytes},
		{"tenant", opts.Tenant, input.MaxNameBytes}, {"idempotency_key", opts.IdempotencyKey, input.MaxKeyBytes},
		{"workflow_id", opts.WorkflowID, input.MaxKeyBytes}, {"stage", opts.Stage, input.MaxNameBytes}} {
		if err := input.CheckText(t.field, t.v, t.max); err != nil {
			return inputError(err)
		}
	}
	for i, tag := range opts.Tags {
		if tag == "" {
			return invalid(fmt.Sprintf("tags[%d]", i), "must not be empty")
		}
		if err := input.CheckText(fmt.Sprintf("tags[%d]", i), tag, input.MaxNameBytes); err != nil {
			return inputError(err)
		}
	}
	return nil
}

// insertManyError names the batch once; the driver names the job in it.
func insertManyError(n int, err error) error {
	if n == 1 {
		return fmt.Errorf("insert 1 job: %w", err)
	}
	return fmt.Errorf("insert %d jobs: %w", n, err)
}

// InsertStream inserts the batches next answers, until it answers none, in
// one transaction: if next or an insert fails, no job of the stream is
// stored. It answers how many jobs it inserted. Each batch takes
// InsertMany's path (COPY on PostgreSQL) and is let go once inserted.
func (c *Client) InsertStream(ctx context.Context, next func() ([]InsertManyParams, error)) (int, error) {
	n := 0
	err := c.inTx(ctx, func(tx driver.Executor) error {
		for {
			jobs, err := next()
			if err != nil || len(jobs) == 0 {
				return err
			}
			if _, err := c.insertMany(ctx, tx, jobs, false); err != nil {
				return err
			}
			n += len(jobs)
		}
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
