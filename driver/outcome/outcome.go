// Package outcome decides how a held job's attempt that did not complete
// ends (Decide): retried, snoozed, paused, cancelled or failed for good.
// The policy is here once; a driver supplies the statements
// (driver.HeldStore, driver.DependencyStore, driver.StopStore) and Fail
// and Snooze apply the decision with them in one transaction.
package outcome

import (
	"context"
	"fmt"
	"time"

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
	return inTx(ctx, d, func(tx driver.ExecutorTx) (*driver.Job, error) { return Fail(ctx, tx, p) })
}

// SnoozeJob runs Snooze in a transaction of d's.
func SnoozeJob(ctx context.Context, d driver.Driver, p driver.SnoozeParams) (*driver.Job, error) {
	return inTx(ctx, d, func(tx driver.ExecutorTx) (*driver.Job, error) { return Snooze(ctx, tx, p) })
}

func inTx(ctx context.Context, d driver.Driver, fn func(driver.ExecutorTx) (*driver.Job, error)) (*driver.Job, error) {
	var out *driver.Job
	err := driver.InTx(ctx, d, func(tx driver.ExecutorTx) (err error) {
		out, err = fn(tx)
		return err
	})
	return out, err
}

// Fail records a failed attempt as Decide says. It runs in the caller's
// transaction.
func Fail(ctx context.Context, s Store, p driver.FailParams) (*driver.Job, error) {
	h, err := s.LockHeld(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	d := Decide(Report{Retry: p.Error.Retryable}, h)
	entry := p.Error
	entry.Retryable = d.Retryable
	return apply(ctx, s, p.HeldJob, d.End, time.Now().Add(p.WaitOf(h.Kind)), &entry)
}

// Snooze puts a job back for p.RunAt without spending its attempt, unless
// Decide says otherwise (it was asked to cancel or to pause). It runs in
// the caller's transaction.
func Snooze(ctx context.Context, s Store, p driver.SnoozeParams) (*driver.Job, error) {
	h, err := s.LockHeld(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	return apply(ctx, s, p.HeldJob, Decide(Report{Snooze: true}, h).End, p.RunAt, nil)
}

// apply ends a locked held job's attempt as decided; at is when a retry or
// snooze runs, entry the attempt's error (nil: none).
func apply(ctx context.Context, s Store, h driver.HeldJob, end End, at time.Time, entry *driver.AttemptError) (*driver.Job, error) {
	switch end {
	case EndRetry:
		return s.RetryHeld(ctx, h, at, entry, false)
	case EndSnooze:
		return s.RetryHeld(ctx, h, at, nil, true)
	case EndPause:
		// Only a driver with pause requests (driver.StopStore) has a job
		// asked to pause.
		ps, ok := s.(driver.StopStore)
		if !ok {
			return nil, fmt.Errorf("pause job %d: %w", h.ID, driver.ErrUnsupported)
		}
		return ps.JobPauseHeld(ctx, h)
	case EndCancel:
		return archive(ctx, s, h, driver.StateCancelled, entry)
	}
	return archive(ctx, s, h, driver.StateFailed, entry)
}

// archive finishes a held job and settles its dependents.
func archive(ctx context.Context, s Store, h driver.HeldJob, st driver.JobState, entry *driver.AttemptError) (*driver.Job, error) {
	j, err := s.ArchiveHeld(ctx, h, st, entry)
	if err != nil {
		return nil, err
	}
	return j, depgraph.SettleParents(ctx, s, []int64{j.ID})
}
