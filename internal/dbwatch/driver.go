package dbwatch

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Driver is a driver whose errors are classified and whose writes are
// recorded in a Tracker. Reads are classified but not recorded: a database
// that refuses writes still answers them.
type Driver struct {
	executor
	inner driver.Driver
}

// Wrap watches d's writes into t.
func Wrap(d driver.Driver, t *Tracker) *Driver {
	classify := func(err error) error { return err }
	if c, ok := d.(driver.ErrorClassifier); ok {
		classify = c.ClassifyError
	}
	w := &watch{classify: classify, tracker: t}
	return &Driver{executor: executor{Executor: d, w: w}, inner: d}
}

// Unwrap is the watched driver.
func (d *Driver) Unwrap() driver.Driver { return d.inner }

func (d *Driver) Name() string                  { return d.inner.Name() }
func (d *Driver) Migrator() driver.Migrator     { return d.inner.Migrator() }
func (d *Driver) Notifier() driver.Notifier     { return d.inner.Notifier() }
func (d *Driver) ClassifyError(err error) error { return d.w.classify(err) }

func (d *Driver) Begin(ctx context.Context) (driver.ExecutorTx, error) {
	tx, err := d.inner.Begin(ctx)
	if err != nil {
		return nil, d.w.write(nil, err)
	}
	t := &executorTx{tx: tx, state: &txState{}}
	t.executor = executor{Executor: tx, w: d.w, tx: t.state}
	return t, nil
}

// UnwrapTx watches the caller's transaction: its refusals are recorded,
// its success is not (the caller commits it).
func (d *Driver) UnwrapTx(tx any) (driver.Executor, error) {
	e, err := d.inner.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	return executor{Executor: e, w: d.w, tx: &txState{}}, nil
}

// watch is what every executor of one driver shares.
type watch struct {
	classify func(error) error
	tracker  *Tracker
}

// txState is a transaction's: a write inside it succeeds only at commit.
type txState struct{ wrote bool }

// write classifies a write's error and records its outcome; inside a
// transaction a success waits for the commit.
func (w *watch) write(tx *txState, err error) error {
	err = w.classify(err)
	if tx != nil && err == nil {
		tx.wrote = true
		return nil
	}
	w.tracker.Record(err)
	return err
}

type executorTx struct {
	executor
	tx    driver.ExecutorTx
	state *txState
}

// Commit records the transaction's writes: a read-only transaction that
// commits says nothing about writes.
func (t *executorTx) Commit(ctx context.Context) error {
	err := t.w.classify(t.tx.Commit(ctx))
	if t.state.wrote || err != nil {
		t.w.tracker.Record(err)
	}
	return err
}

func (t *executorTx) Rollback(ctx context.Context) error { return t.w.classify(t.tx.Rollback(ctx)) }

// executor watches the statements of driver.Executor and of every optional
// store (driver.Full, checked below): an optional store's method the watch
// lacks does not compile, and one the driver lacks answers
// driver.ErrUnsupported.
type executor struct {
	driver.Executor
	w  *watch
	tx *txState // nil outside a transaction
}

func (e executor) read(err error) error  { return e.w.classify(err) }
func (e executor) write(err error) error { return e.w.write(e.tx, err) }

func (e executor) JobInsertMany(ctx context.Context, jobs []*driver.InsertParams) ([]driver.InsertResult, error) {
	r, err := e.Executor.JobInsertMany(ctx, jobs)
	return r, e.write(err)
}

func (e executor) JobInsertFast(ctx context.Context, jobs []*driver.InsertParams) ([]int64, error) {
	r, err := e.Executor.JobInsertFast(ctx, jobs)
	return r, e.write(err)
}

func (e executor) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	r, err := e.Executor.JobClaim(ctx, p)
	return r, e.write(err)
}

func (e executor) JobInsertStart(ctx context.Context, job *driver.InsertParams, start driver.StartParams) (*driver.Job, error) {
	r, err := e.Executor.JobInsertStart(ctx, job, start)
	return r, e.write(err)
}

func (e executor) JobHeartbeat(ctx context.Context, p driver.HeartbeatParams) ([]driver.HeartbeatResult, error) {
	r, err := e.Executor.JobHeartbeat(ctx, p)
	return r, e.write(err)
}

func (e executor) JobCompleteMany(ctx context.Context, jobs []driver.CompleteParams) ([]int64, error) {
	r, err := e.Executor.JobCompleteMany(ctx, jobs)
	return r, e.write(err)
}

func (e executor) JobComplete(ctx context.Context, p driver.CompleteParams) (*driver.Job, error) {
	r, err := e.Executor.JobComplete(ctx, p)
	return r, e.write(err)
}

func (e executor) JobProgress(ctx context.Context, p driver.ProgressParams) (*driver.HeartbeatResult, error) {
	r, err := e.Executor.JobProgress(ctx, p)
	return r, e.write(err)
}

func (e executor) JobGet(ctx context.Context, id int64) (*driver.Job, error) {
	r, err := e.Executor.JobGet(ctx, id)
	return r, e.read(err)
}

func (e executor) JobList(ctx context.Context, p driver.ListParams) ([]*driver.Job, error) {
	st, err := driver.As[driver.AdminStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobList(ctx, p)
	return r, e.read(err)
}

func (e executor) JobCancel(ctx context.Context, id int64) (*driver.Job, error) {
	st, err := driver.As[driver.AdminStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobCancel(ctx, id)
	return r, e.write(err)
}

func (e executor) JobRetry(ctx context.Context, id int64) (*driver.Job, error) {
	st, err := driver.As[driver.AdminStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobRetry(ctx, id)
	return r, e.write(err)
}

func (e executor) JobPause(ctx context.Context, id int64) (*driver.Job, error) {
	st, err := driver.As[driver.AdminStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobPause(ctx, id)
	return r, e.write(err)
}

func (e executor) JobResume(ctx context.Context, id int64) (*driver.Job, error) {
	st, err := driver.As[driver.AdminStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobResume(ctx, id)
	return r, e.write(err)
}

func (e executor) JobRescue(ctx context.Context, limit int, since time.Time) (driver.RescueResult, error) {
	r, err := e.Executor.JobRescue(ctx, limit, since)
	return r, e.write(err)
}

func (e executor) JobChangedSince(ctx context.Context, since time.Time, limit int) ([]*driver.Job, error) {
	st, err := driver.As[driver.StatsStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobChangedSince(ctx, since, limit)
	return r, e.read(err)
}

func (e executor) JobStats(ctx context.Context) (*driver.Stats, error) {
	st, err := driver.As[driver.StatsStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobStats(ctx)
	return r, e.read(err)
}

func (e executor) JobActivity(ctx context.Context, since time.Time, bucket time.Duration) (*driver.Activity, error) {
	st, err := driver.As[driver.StatsStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobActivity(ctx, since, bucket)
	return r, e.read(err)
}

func (e executor) JobPromoteScheduled(ctx context.Context, limit int, since time.Time) (driver.PromoteResult, error) {
	r, err := e.Executor.JobPromoteScheduled(ctx, limit, since)
	return r, e.write(err)
}

func (e executor) JobSelect(ctx context.Context, p driver.SelectParams) ([]int64, error) {
	st, err := driver.As[driver.BulkStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobSelect(ctx, p)
	return r, e.read(err)
}

func (e executor) JobDeleteArchived(ctx context.Context, ids []int64) ([]int64, error) {
	st, err := driver.As[driver.BulkStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobDeleteArchived(ctx, ids)
	return r, e.write(err)
}
