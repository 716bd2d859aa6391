package pgdriver

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

// JobInsertMany pipelines plain inserts in one round trip; jobs with keys or
// dependencies take the careful path, one at a time, in a transaction.
func (e executor) JobInsertMany(ctx context.Context, jobs []*driver.InsertParams) ([]driver.InsertResult, error) {
	out := make([]driver.InsertResult, len(jobs))
	plain := true
	for _, p := range jobs {
		if p.IdempotencyKey != "" || len(p.DependsOn) > 0 || p.Flow != nil {
			plain = false
		}
	}
	if plain {
		return out, e.insertPipelined(ctx, jobs, out)
	}
	if err := e.citusRefuses(ctx, jobs); err != nil {
		return nil, err
	}
	if driver.HasFlow(jobs) {
		return e.insertManyFlow(ctx, jobs)
	}
	err := e.inTx(ctx, func(tx executor) error {
		for i, p := range jobs {
			r, err := tx.insertOne(ctx, p)
			if err != nil {
				return driver.InBatch(err, i, len(jobs), p.Kind)
			}
			out[i] = r
		}
		return nil
	})
	return out, err
}

func (e executor) JobInsertStart(ctx context.Context, p *driver.InsertParams, start driver.StartParams) (*driver.Job, error) {
	if !p.Plain() || p.Flow != nil {
		return nil, fmt.Errorf("insert and start: job of kind %q has an idempotency key, dependencies or flow keys", p.Kind)
	}
	args := jobInsertStart.Args(insertStartArgs{newJobColumns(p), start.WorkerID, secs(start.Lease)})
	var j *driver.Job
	err := e.insertInto(ctx, func(e executor, table string) (err error) {
		j, err = scanOne(e.q.QueryRow(ctx, into(jobInsertStart, table), args...))
		return err
	})
	return j, err
}

func (e executor) insertPipelined(ctx context.Context, jobs []*driver.InsertParams, out []driver.InsertResult) error {
	return e.insertInto(ctx, func(e executor, table string) error {
		return e.insertPlain(ctx, into(jobInsert, table), jobs, out)
	})
}

// insertPlain inserts plain jobs with stmt (jobInsert's, perhaps for a
// spill table).
func (e executor) insertPlain(ctx context.Context, stmt string, jobs []*driver.InsertParams, out []driver.InsertResult) error {
	if len(jobs) == 1 && jobs[0].Wake {
		return e.insertWaking(ctx, stmt, jobs[0], out)
	}
	if len(jobs) == 1 {
		j, err := scanOne(e.q.QueryRow(ctx, stmt, jobInsert.Args(newInsertArgs(jobs[0], false))...))
		out[0] = driver.InsertResult{Job: j}
		return err
	}
	return e.inTx(ctx, func(tx executor) error {
		b := &pgx.Batch{}
		for _, p := range jobs {
			b.Queue(stmt, jobInsert.Args(newInsertArgs(p, false))...)
		}
		br := tx.q.SendBatch(ctx, b)
		for i := range jobs {
			j, err := scanOne(br.QueryRow())
			if err != nil {
				br.Close()
				return err
			}
			out[i] = driver.InsertResult{Job: j}
		}
		return br.Close()
	})
}

// insertWaking inserts p and notifies its queue in one pipeline: outside a
// transaction the two run in one implicit transaction, so the wake-up goes
// out at the insert's commit, with no commit or round trip of its own.
func (e executor) insertWaking(ctx context.Context, stmt string, p *driver.InsertParams, out []driver.InsertResult) error {
	ch, _, err := e.n.channels(ctx)
	if err != nil {
		return err
	}
	var j *driver.Job
	b := &pgx.Batch{}
	b.Queue(stmt, jobInsert.Args(newInsertArgs(p, false))...).QueryRow(func(row pgx.Row) (err error) {
		j, err = scanOne(row)
		return err
	})
	b.Queue(notify.SQL, notify.Args(notifyArgs{ch, []string{p.Queue}})...)
	if err := e.q.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	out[0] = driver.InsertResult{Job: j, Woken: true}
	return nil
}

// runAtAndTags answers p's run_at (nil: the database's now) and tags (never
// nil) as the insert statements take them.
func runAtAndTags(p *driver.InsertParams) (*time.Time, []string) {
	var runAt *time.Time
	if !p.RunAt.IsZero() {
		runAt = &p.RunAt
	}
	tags := p.Tags
	if tags == nil {
		tags = []string{}
	}
	return runAt, tags
}

func newJobColumns(p *driver.InsertParams) jobColumns {
	runAt, tags := runAtAndTags(p)
	return jobColumns{p.Kind, p.Op, p.Queue, p.Tenant, p.Paused, p.Priority, jsonOr(p.Payload, "{}"),
		jsonOr(p.Metadata, "{}"), tags, p.MaxRetries, runAt, p.WorkflowID, p.Stage, p.RunOnParentFailure}
}

func newInsertArgs(p *driver.InsertParams, waiting bool) insertArgs {
	deps := p.DependsOn
	if deps == nil {
		deps = []int64{}
	}
	return insertArgs{newJobColumns(p), waiting, p.IdempotencyKey, deps}
}

func jsonOr(b []byte, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// insertOne inserts one job inside a transaction, honouring its key and its
// dependencies.
func (e executor) insertOne(ctx context.Context, p *driver.InsertParams) (driver.InsertResult, error) {
	parents, err := e.parentStates(ctx, p.DependsOn)
	if err != nil {
		return driver.InsertResult{}, err
	}
	waiting := false
	for _, st := range parents {
		if st != driver.StateCompleted {
			waiting = true
		}
	}
	args := newInsertArgs(p, waiting)
	var res driver.InsertResult
	if p.IdempotencyKey != "" && p.UniquePolicy == "window" {
		res, err = e.insertWindowed(ctx, p, args)
	} else {
		res, err = e.insertActive(ctx, p, args)
	}
	if err != nil || res.Duplicate || !waiting {
		return res, err
	}
	return res, e.linkParents(ctx, res.Job, parents)
}

// insertActive keeps one live job per key: a conflict returns the holder.
func (e executor) insertActive(ctx context.Context, p *driver.InsertParams, args insertArgs) (driver.InsertResult, error) {
	for range 5 {
		j, err := scanOne(e.q.QueryRow(ctx, jobInsert.SQL, jobInsert.Args(args)...))
		if err == nil {
			return driver.InsertResult{Job: j}, nil
		}
		if err != driver.ErrNotFound {
			return driver.InsertResult{}, err
		}
		// The key is live; the holder may finish before we read it, then we try again.
		j, err = e.jobByKey(ctx, p)
		if err == nil {
			return driver.InsertResult{Job: j, Duplicate: true}, nil
		}
		if err != driver.ErrNotFound {
			return driver.InsertResult{}, err
		}
	}
	return driver.InsertResult{}, fmt.Errorf("idempotency key %q kept changing hands", p.IdempotencyKey)
}

// insertWindowed takes the key for the window, or returns the job holding it.
func (e executor) insertWindowed(ctx context.Context, p *driver.InsertParams, args insertArgs) (driver.InsertResult, error) {
	var id int64
	var took bool
	take := uniqueKeyTake.Args(keyTakeArgs{keyArgs{p.Tenant, p.IdempotencyKey}, secs(p.UniqueWindow)})
	err := e.q.QueryRow(ctx, uniqueKeyTake.SQL, take...).Scan(&id, &took)
	if err == pgx.ErrNoRows {
		if err := e.q.QueryRow(ctx, uniqueKeyHolder.SQL, uniqueKeyHolder.Args(keyArgs{p.Tenant, p.IdempotencyKey})...).Scan(&id); err != nil {
			return driver.InsertResult{}, fmt.Errorf("read holder of key %q: %w", p.IdempotencyKey, err)
		}
		j, err := e.JobGet(ctx, id)
		return driver.InsertResult{Job: j, Duplicate: true}, err
	}
	if err != nil {
		return driver.InsertResult{}, err
	}
	j, err := scanOne(e.q.QueryRow(ctx, jobInsertWithID.SQL, jobInsertWithID.Args(insertWithIDArgs{args, id})...))
	if err == driver.ErrNotFound {
		// A live job still holds the key after its window: it stays the one.
		j, err = scanOne(e.q.QueryRow(ctx, jobByKey.SQL, jobByKey.Args(keyArgs{p.Tenant, p.IdempotencyKey})...))
		return driver.InsertResult{Job: j, Duplicate: true}, err
	}
	return driver.InsertResult{Job: j}, err
}

// parentStates answers the state of each parent, locking live ones so that
// none finishes unseen while the child links to it.
func (e executor) parentStates(ctx context.Context, ids []int64) (map[int64]driver.JobState, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := e.q.Query(ctx, jobParentStates.SQL, jobParentStates.Args(idsArg{ids})...)
	if err != nil {
		return nil, err
	}
	states := map[int64]driver.JobState{}
	for rows.Next() {
		var id int64
		var st string
		if err := rows.Scan(&id, &st); err != nil {
			rows.Close()
			return nil, err
		}
		states[id] = driver.JobState(st)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, ok := states[id]; !ok {
			return nil, &driver.MissingDependencyError{ID: id}
		}
	}
	return states, nil
}

// linkParents records the unfinished parents of a waiting job; a parent that
// already failed or was cancelled settles the child at once. Only a child
// left with no unfinished parent is released here: the release reads every
// waiting job, which a child still waiting need not pay.
func (e executor) linkParents(ctx context.Context, j *driver.Job, parents map[int64]driver.JobState) error {
	var live []int64
	for id, st := range parents {
		if !st.Finished() {
			live = append(live, id)
		}
	}
	if _, err := e.q.Exec(ctx, jobDepInsert.SQL, jobDepInsert.Args(depInsertArgs{j.ID, live})...); err != nil {
		return err
	}
	for id, st := range parents {
		if st == driver.StateFailed || st == driver.StateCancelled {
			if err := depgraph.SettleDependent(ctx, e, j.ID, id, st); err != nil {
				return err
			}
		}
	}
	if len(live) > 0 {
		return nil // it waits for them
	}
	_, err := e.ReleaseWaiting(ctx) // and wakes their queues at commit
	return err
}

var (
	jobInsert       = bindInto[insertArgs]("JobInsert")
	jobInsertWithID = bind[insertWithIDArgs]("JobInsertWithID")
	jobInsertStart  = bindInto[insertStartArgs]("JobInsertStart")
	uniqueKeyTake   = bind[keyTakeArgs]("UniqueKeyTake")
	jobByKey        = bind[keyArgs]("JobByKey")
	uniqueKeyHolder = bind[keyArgs]("UniqueKeyHolder")
	jobParentStates = bind[idsArg]("JobParentStates")
	jobDepInsert    = bind[depInsertArgs]("JobDepInsert")
)

// jobColumns are the columns every insert statement takes from the job.
type jobColumns struct {
	Kind               string     `sql:"kind"`
	Op                 string     `sql:"op"`
	Queue              string     `sql:"queue"`
	Tenant             string     `sql:"tenant"`
	Paused             bool       `sql:"paused"`
	Priority           int        `sql:"priority"`
	Payload            string     `sql:"payload"`
	Metadata           string     `sql:"metadata"`
	Tags               []string   `sql:"tags"`
	MaxRetries         int        `sql:"max_retries"`
	RunAt              *time.Time `sql:"run_at"` // nil: the database's now
	WorkflowID         string     `sql:"workflow_id"`
	Stage              string     `sql:"stage"`
	RunOnParentFailure bool       `sql:"run_on_parent_failure"`
}

// insertArgs are JobInsert's: a job waiting for its parents, or holding a
// key, or neither.
type insertArgs struct {
	jobColumns
	Waiting        bool    `sql:"waiting"`
	IdempotencyKey string  `sql:"idempotency_key"`
	DependsOn      []int64 `sql:"depends_on"`
}

// insertWithIDArgs insert the job under the id its window key took.
type insertWithIDArgs struct {
	insertArgs
	ID int64 `sql:"id"`
}

// insertStartArgs insert a plain job started for WorkerID, leased Lease
// seconds.
type insertStartArgs struct {
	jobColumns
	WorkerID string  `sql:"worker_id"`
	Lease    float64 `sql:"lease"`
}

// keyTakeArgs take a key for Window seconds.
type keyTakeArgs struct {
	keyArgs
	Window float64 `sql:"window"`
}

// keyArgs name an idempotency key.
type keyArgs struct {
	Tenant string `sql:"tenant"`
	Key    string `sql:"key"`
}

type depInsertArgs struct {
	JobID   int64   `sql:"job_id"`
	Parents []int64 `sql:"parents"`
}
