package dbwatch

//go:generate go run ./gen -driver ../../driver -out forward_gen.go

import (
	"context"

	"github.com/skiplock/skiplock/driver"
)

// Driver is a driver whose errors are classified and whose writes are
// recorded in a Tracker. Reads are classified but not recorded: a database
// that refuses writes still answers them.
type Driver struct {
	executor
	inner driver.Driver
}

// Wrap watches d's writes into t. When d reads from a replica
// (driver.Replicated), the reads marked //skiplock:replica made outside a
// transaction run there.
func Wrap(d driver.Driver, t *Tracker) *Driver {
	classify := func(err error) error { return err }
	if c, ok := d.(driver.ErrorClassifier); ok {
		classify = c.ClassifyError
	}
	w := &watch{classify: classify, tracker: t}
	var replica driver.Executor
	if r, ok := d.(driver.Replicated); ok {
		replica = r.Replica()
	}
	return &Driver{executor: executor{Executor: d, w: w, replica: replica}, inner: d}
}

// ReadsReplica reports whether the replica-safe reads run on a replica.
func (d *Driver) ReadsReplica() bool { return d.replica != nil }

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

// executor watches the statements of every store of package driver: one
// forwarder for each method (forward_gen.go, written by `go generate` from
// the stores' declarations) runs it, classifies its error and records a
// write's outcome. A method of an optional store that the driver lacks
// answers driver.ErrUnsupported.
type executor struct {
	driver.Executor
	w  *watch
	tx *txState // nil outside a transaction
	// replica runs the reads marked //skiplock:replica; nil: none, and
	// always nil in a transaction, whose reads stay on the primary.
	replica driver.Executor
}

// reading is the executor a replica-safe read runs on: the replica's when
// there is one and ctx does not ask for the primary, else e.
func (e executor) reading(ctx context.Context) executor {
	if e.replica == nil || driver.PrimaryAsked(ctx) {
		return e
	}
	return executor{Executor: e.replica, w: e.w}
}

func (e executor) read(err error) error  { return e.w.classify(err) }
func (e executor) write(err error) error { return e.w.write(e.tx, err) }

// call0, call1 and call2 run a statement of the optional store S on the
// watched executor and pass its error through outcome (read or write).
func call0[S any](e executor, outcome func(error) error, run func(S) error) error {
	st, err := driver.As[S](e.Executor)
	if err != nil {
		return err
	}
	return outcome(run(st))
}

func call1[S, R any](e executor, outcome func(error) error, run func(S) (R, error)) (R, error) {
	st, err := driver.As[S](e.Executor)
	if err != nil {
		var zero R
		return zero, err
	}
	r, err := run(st)
	return r, outcome(err)
}

func call2[S, R1, R2 any](e executor, outcome func(error) error, run func(S) (R1, R2, error)) (R1, R2, error) {
	st, err := driver.As[S](e.Executor)
	if err != nil {
		var zero1 R1
		var zero2 R2
		return zero1, zero2, err
	}
	r1, r2, err := run(st)
	return r1, r2, outcome(err)
}

// UnwrapExecutor is the watched executor: driver.As looks through the
// watch, which has every optional store, to the ones the driver has.
func (e executor) UnwrapExecutor() driver.Executor { return e.Executor }

var _ interface {
	driver.Full
	driver.HotTableStore
	driver.FlowStore
	driver.FailStore
	driver.CompleteClaimStore
	driver.ReplicaStore
} = executor{}
