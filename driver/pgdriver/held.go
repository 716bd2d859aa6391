package pgdriver

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// The steps of a held job's end other than its completion (complete.go)
// and its failure in one statement (fail.go): locking it, retrying it
// later, archiving it, and its progress.

func (e executor) LockHeld(ctx context.Context, h driver.HeldJob) (driver.HeldState, error) {
	var s driver.HeldState
	row, err := e.lockHeldRow(ctx, h)
	if err != nil {
		return s, err
	}
	err = row.Scan(&s.Kind, &s.Attempt, &s.MaxRetries, &s.CancelRequested, &s.PauseRequested)
	if err == pgx.ErrNoRows {
		return s, driver.ErrLeaseLost
	}
	return s, err
}

// lockHeldRow locks a held job's row: in its queue's shard on Citus (a
// job not live there reads as no row).
func (e executor) lockHeldRow(ctx context.Context, h driver.HeldJob) (pgx.Row, error) {
	queue, citus, err := e.heldQueue(ctx, h)
	if err != nil || !citus {
		return e.q.QueryRow(ctx, jobHeldForUpdate.SQL, jobHeldForUpdate.Args(heldArgs(h))...), err
	}
	return e.q.QueryRow(ctx, citusJobHeldForUpdate.SQL, citusJobHeldForUpdate.Args(citusHeldArgs{heldArgs(h), queue})...), nil
}

func (e executor) RetryHeld(ctx context.Context, h driver.HeldJob, at time.Time, entry *driver.AttemptError, unspend bool) (*driver.Job, error) {
	give := 0
	if unspend {
		give = 1
	}
	args := retryArgs{heldArgs(h), at, errorEntry(entry), give}
	queue, citus, err := e.heldQueue(ctx, h)
	if err != nil {
		return nil, err
	}
	sql, values := jobRetryLater.SQL, jobRetryLater.Args(args)
	if citus {
		sql, values = citusJobRetryLater.SQL, citusJobRetryLater.Args(citusRetryArgs{args, queue})
	}
	j, err := scanOne(e.q.QueryRow(ctx, sql, values...))
	if err == driver.ErrNotFound {
		return nil, driver.ErrLeaseLost
	}
	return j, err
}

func (e executor) ArchiveHeld(ctx context.Context, h driver.HeldJob, state driver.JobState, entry *driver.AttemptError) (*driver.Job, error) {
	args := archiveHeldArgs{heldArgs(h), string(state), errorEntry(entry)}
	queue, citus, err := e.heldQueue(ctx, h)
	if err != nil {
		return nil, err
	}
	sql, values := jobArchiveHeld.SQL, jobArchiveHeld.Args(args)
	if citus {
		sql, values = citusJobArchiveHeld.SQL, citusJobArchiveHeld.Args(citusArchiveHeldArgs{args, queue})
	}
	j, err := scanOne(e.q.QueryRow(ctx, sql, values...))
	if err == driver.ErrNotFound {
		return nil, driver.ErrLeaseLost
	}
	return j, err
}

func (e executor) JobProgress(ctx context.Context, p driver.ProgressParams) (*driver.HeartbeatResult, error) {
	var h driver.HeartbeatResult
	leaseKinds, leases := kindLeases([]string{}, p.LeaseKinds, p.Leases)
	args := progressArgs{heldArgs(p.HeldJob), p.Progress, p.ProgressMessage,
		nullable(p.Checkpoint), secs(p.Lease), leaseKinds, leases}
	queue, citus, err := e.heldQueue(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	sql, values := jobProgress.SQL, jobProgress.Args(args)
	if citus {
		sql, values = citusProgress(args, queue)
	}
	err = e.q.QueryRow(ctx, sql, values...).Scan(&h.ID, scanTime(&h.LeaseUntil), &h.CancelRequested, &h.PauseRequested)
	if err == pgx.ErrNoRows {
		return nil, driver.ErrLeaseLost
	}
	return &h, err
}

var (
	jobHeldForUpdate = bind[heldArgs]("JobHeldForUpdate")
	jobRetryLater    = bind[retryArgs]("JobRetryLater")
	jobArchiveHeld   = bind[archiveHeldArgs]("JobArchiveHeld")
	jobProgress      = bind[progressArgs]("JobProgress")
)

type retryArgs struct {
	heldArgs
	RunAt  time.Time `sql:"run_at"`
	Error  string    `sql:"error"`
	Refund int       `sql:"refund"` // 1 gives the attempt back
}

type archiveHeldArgs struct {
	heldArgs
	State string `sql:"state"`
	Error string `sql:"error"`
}

type progressArgs struct {
	heldArgs
	Progress        *int      `sql:"progress"`
	ProgressMessage *string   `sql:"progress_message"`
	Checkpoint      any       `sql:"checkpoint"`
	Lease           float64   `sql:"lease"`
	LeaseKinds      []string  `sql:"lease_kinds"`
	Leases          []float64 `sql:"leases"`
}
