package dbwatch

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// UnwrapExecutor is the watched executor: driver.As looks through the
// watch, which has every optional store, to the ones the driver has.
func (e executor) UnwrapExecutor() driver.Executor { return e.Executor }

// The statements that the library runs in its own transaction (outcome,
// depgraph): writes, so that a refusal inside it is classified.

func (e executor) LockHeld(ctx context.Context, h driver.HeldJob) (bool, error) {
	r, err := e.Executor.LockHeld(ctx, h)
	return r, e.write(err)
}

func (e executor) RetryHeld(ctx context.Context, h driver.HeldJob, at time.Time, entry *driver.AttemptError, unspend bool) (*driver.Job, error) {
	r, err := e.Executor.RetryHeld(ctx, h, at, entry, unspend)
	return r, e.write(err)
}

func (e executor) ArchiveHeld(ctx context.Context, h driver.HeldJob, state driver.JobState, entry *driver.AttemptError) (*driver.Job, error) {
	r, err := e.Executor.ArchiveHeld(ctx, h, state, entry)
	return r, e.write(err)
}

func (e executor) DepsOfParents(ctx context.Context, parents []int64) ([]driver.DepLink, error) {
	r, err := e.Executor.DepsOfParents(ctx, parents)
	return r, e.write(err)
}

func (e executor) DepDelete(ctx context.Context, child, parent int64) error {
	return e.write(e.Executor.DepDelete(ctx, child, parent))
}

func (e executor) ArchivedState(ctx context.Context, id int64) (driver.JobState, error) {
	r, err := e.Executor.ArchivedState(ctx, id)
	return r, e.read(err)
}

func (e executor) CancelDependent(ctx context.Context, child int64, reason string) (bool, error) {
	r, err := e.Executor.CancelDependent(ctx, child, reason)
	return r, e.write(err)
}

func (e executor) ReleaseWaiting(ctx context.Context) ([]string, error) {
	r, err := e.Executor.ReleaseWaiting(ctx)
	return r, e.write(err)
}

var _ driver.Full = executor{}
