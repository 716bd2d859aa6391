package vault

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
)

// RestoreTarget is where Restore puts jobs back: RestoreQueue or
// RestoreArchive.
type RestoreTarget = driver.RestoreTarget

const (
	// RestoreQueue puts each job back into the queue as a new attempt, as
	// Client.JobRetry would: pending (waiting while a parent is live), the
	// same id, the attempt number counting on, the error history kept and
	// the retry budget back. Failed and cancelled jobs only.
	RestoreQueue = driver.RestoreQueue
	// RestoreArchive puts each job back into the archive as the vault
	// holds it: the same id, state, times, result and errors.
	RestoreArchive = driver.RestoreArchive
)

// DefaultRestoreBatch is how many jobs Restore writes in one transaction.
const DefaultRestoreBatch = 1000

// RestoreParams picks the jobs Restore puts back (the latest version of
// each, as Query answers them) and says where.
type RestoreParams struct {
	// From and To bound the finish time: From ≤ finished_at < To; a zero
	// bound is open.
	From, To time.Time
	// States: only these; none is every finished state for RestoreArchive,
	// failed and cancelled for RestoreQueue (a completed job is not
	// retried).
	States []skiplock.JobState
	Kind   string
	Queue  string
	Tenant *string
	Into   RestoreTarget
	// DryRun writes each batch in a transaction rolled back: the result
	// counts what a restore would do, and nothing stays.
	DryRun bool
	// Batch is how many jobs are written at a time (DefaultRestoreBatch).
	Batch int
	// Progress, when set, is called after each batch.
	Progress func(RestoreResult)
}

// RestoreResult counts what a Restore did (or, dry, would do).
type RestoreResult struct {
	// Matched counts the jobs of the vault the parameters picked.
	Matched int `json:"matched"`
	// Restored counts those put back; Skipped those whose id the database
	// holds already, live or archived (or, into the queue, whose
	// idempotency key a live job holds): never overwritten.
	Restored int `json:"restored"`
	Skipped  int `json:"skipped"`
}

// validate checks p and fills its defaults.
func (p *RestoreParams) validate() error {
	if !p.Into.Valid() {
		return &skiplock.ValidationError{Field: "into", Message: fmt.Sprintf("must be %q or %q, got %q", RestoreQueue, RestoreArchive, p.Into)}
	}
	if p.Batch < 0 {
		return &skiplock.ValidationError{Field: "batch", Message: fmt.Sprintf("must not be negative, got %d", p.Batch)}
	}
	if p.Batch == 0 {
		p.Batch = DefaultRestoreBatch
	}
	if !p.From.IsZero() && !p.To.IsZero() && !p.From.Before(p.To) {
		return &skiplock.ValidationError{Field: "to", Message: fmt.Sprintf("must be after from (%s), got %s",
			p.From.UTC().Format(time.RFC3339), p.To.UTC().Format(time.RFC3339))}
	}
	for _, s := range p.States {
		if !s.Finished() {
			return &skiplock.ValidationError{Field: "state", Message: fmt.Sprintf("%q is not a finished state (completed, failed, cancelled)", s)}
		}
		if s == skiplock.StateCompleted && p.Into == RestoreQueue {
			return &skiplock.ValidationError{Field: "state", Message: "a completed job is not retried: restore it into the archive"}
		}
	}
	if len(p.States) == 0 && p.Into == RestoreQueue {
		p.States = []skiplock.JobState{skiplock.StateFailed, skiplock.StateCancelled}
	}
	return nil
}

// Restore puts the jobs of the vault that p picks back into c's database,
// with their ids, a batch at a time (driver.ArchiveStore's JobRestore). A
// job whose id the database holds is skipped, so a Restore run again, or
// after an interruption, restores only what is missing.
func Restore(ctx context.Context, c *skiplock.Client, v *Vault, p RestoreParams) (RestoreResult, error) {
	if err := p.validate(); err != nil {
		return RestoreResult{}, err
	}
	if _, err := driver.As[driver.ArchiveStore](c.Driver()); err != nil {
		return RestoreResult{}, err
	}
	var (
		res   RestoreResult
		batch []*skiplock.JobRow
	)
	flush := func() error {
		n, err := restoreBatch(ctx, c.Driver(), batch, p.Into, p.DryRun)
		if err != nil {
			return err
		}
		res.Restored += n
		res.Skipped += len(batch) - n
		batch = batch[:0]
		if p.Progress != nil {
			p.Progress(res)
		}
		return nil
	}
	q := QueryParams{From: p.From, To: p.To, States: p.States, Kind: p.Kind, Queue: p.Queue, Tenant: p.Tenant}
	err := v.Query(ctx, q, func(j *skiplock.JobRow) error {
		res.Matched++
		if batch = append(batch, j); len(batch) >= p.Batch {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	return res, err
}

// restoreBatch restores jobs and answers how many were; dry, in a
// transaction it rolls back.
func restoreBatch(ctx context.Context, d driver.Driver, jobs []*skiplock.JobRow, into RestoreTarget, dry bool) (int, error) {
	if !dry {
		st, err := driver.As[driver.ArchiveStore](d)
		if err != nil {
			return 0, err
		}
		ids, err := st.JobRestore(ctx, jobs, into)
		if err != nil {
			return 0, fmt.Errorf("restore jobs %d-%d: %w", minID(jobs), maxID(jobs), err)
		}
		return len(ids), nil
	}
	tx, err := d.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	st, err := driver.As[driver.ArchiveStore](tx)
	if err != nil {
		return 0, err
	}
	ids, err := st.JobRestore(ctx, jobs, into)
	if err != nil {
		return 0, fmt.Errorf("restore jobs %d-%d (dry run): %w", minID(jobs), maxID(jobs), err)
	}
	return len(ids), nil
}

func minID(jobs []*skiplock.JobRow) int64 {
	return slices.MinFunc(jobs, func(a, b *skiplock.JobRow) int { return compareInt(a.ID, b.ID) }).ID
}

func maxID(jobs []*skiplock.JobRow) int64 {
	return slices.MaxFunc(jobs, func(a, b *skiplock.JobRow) int { return compareInt(a.ID, b.ID) }).ID
}
