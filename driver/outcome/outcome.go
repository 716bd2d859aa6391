// Package outcome decides how a held job's failed or snoozed attempt ends:
// retried later, failed for good, or cancelled when a cancel was requested
// meanwhile. The policy is here once; a driver supplies the statements
// (driver.HeldStore, driver.DependencyStore) and FailJob and SnoozeJob run
// them in one transaction of the driver's.
package outcome

import (
	"context"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

// Store is what the policy runs on: a held job's statements and those
// settling the dependents of a job it finishes.
type Store interface {
	driver.HeldStore
	driver.DependencyStore
}

// FailJob runs Fail in a transaction of d's.
func FailJob(ctx context.Context, d driver.Driver, p driver.FailParams) (*driver.Job, error) {
	var out *driver.Job
	err := driver.InTx(ctx, d, func(tx driver.ExecutorTx) (err error) {
		out, err = Fail(ctx, tx, p)
		return err
	})
	return out, err
}

// SnoozeJob runs Snooze in a transaction of d's.
func SnoozeJob(ctx context.Context, d driver.Driver, p driver.SnoozeParams) (*driver.Job, error) {
	var out *driver.Job
	err := driver.InTx(ctx, d, func(tx driver.ExecutorTx) (err error) {
		out, err = Snooze(ctx, tx, p)
		return err
	})
	return out, err
}

// Fail records a failed attempt: retried at p.RetryAt, or failed for good
// without one; a job asked to cancel ends cancelled either way. It runs in
// the caller's transaction.
func Fail(ctx context.Context, s Store, p driver.FailParams) (*driver.Job, error) {
	cancelled, err := s.LockHeld(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	switch {
	case cancelled:
		return archive(ctx, s, p.HeldJob, driver.StateCancelled, &p.Error)
	case p.RetryAt != nil:
		return s.RetryHeld(ctx, p.HeldJob, *p.RetryAt, &p.Error, false)
	default:
		return archive(ctx, s, p.HeldJob, driver.StateFailed, &p.Error)
	}
}

// Snooze puts a job back for p.RunAt without spending its attempt; a job
// asked to cancel ends cancelled instead. It runs in the caller's
// transaction.
func Snooze(ctx context.Context, s Store, p driver.SnoozeParams) (*driver.Job, error) {
	cancelled, err := s.LockHeld(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	if cancelled {
		return archive(ctx, s, p.HeldJob, driver.StateCancelled, nil)
	}
	return s.RetryHeld(ctx, p.HeldJob, p.RunAt, nil, true)
}

// archive finishes a held job and settles its dependents.
func archive(ctx context.Context, s Store, h driver.HeldJob, st driver.JobState, entry *driver.AttemptError) (*driver.Job, error) {
	j, err := s.ArchiveHeld(ctx, h, st, entry)
	if err != nil {
		return nil, err
	}
	return j, depgraph.SettleParents(ctx, s, []int64{j.ID})
}
