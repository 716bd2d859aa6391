// Package outcome decides how a held job's failed or snoozed attempt ends:
// retried later, failed for good, or cancelled when a cancel was requested
// meanwhile. The policy is here once; each driver supplies the statements
// (Store), run inside one transaction of its own.
package outcome

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Store runs the statements on a held job, fenced on its holder; each
// answers driver.ErrLeaseLost when the job is no longer held.
type Store interface {
	// LockHeld locks the held job and answers whether it was asked to cancel.
	LockHeld(ctx context.Context, h driver.HeldJob) (cancelRequested bool, err error)
	// RetryHeld puts the job back for another attempt at `at`, appending
	// entry (nil: none); unspend gives the attempt back (a snooze).
	RetryHeld(ctx context.Context, h driver.HeldJob, at time.Time, entry *driver.AttemptError, unspend bool) (*driver.Job, error)
	// ArchiveHeld finishes the job in state, appending entry (nil: none),
	// and settles its dependents.
	ArchiveHeld(ctx context.Context, h driver.HeldJob, state driver.JobState, entry *driver.AttemptError) (*driver.Job, error)
}

// Fail records a failed attempt: retried at p.RetryAt, or failed for good
// without one; a job asked to cancel ends cancelled either way.
func Fail(ctx context.Context, s Store, p driver.FailParams) (*driver.Job, error) {
	cancelled, err := s.LockHeld(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	switch {
	case cancelled:
		return s.ArchiveHeld(ctx, p.HeldJob, driver.StateCancelled, &p.Error)
	case p.RetryAt != nil:
		return s.RetryHeld(ctx, p.HeldJob, *p.RetryAt, &p.Error, false)
	default:
		return s.ArchiveHeld(ctx, p.HeldJob, driver.StateFailed, &p.Error)
	}
}

// Snooze puts a job back for p.RunAt without spending its attempt; a job
// asked to cancel ends cancelled instead.
func Snooze(ctx context.Context, s Store, p driver.SnoozeParams) (*driver.Job, error) {
	cancelled, err := s.LockHeld(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	if cancelled {
		return s.ArchiveHeld(ctx, p.HeldJob, driver.StateCancelled, nil)
	}
	return s.RetryHeld(ctx, p.HeldJob, p.RunAt, nil, true)
}
