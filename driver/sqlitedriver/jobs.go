package sqlitedriver

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

// kindLeases maps each kind to its lease in µs, for the statements that look
// a job's kind up in @leases.
func kindLeases(kinds []string, leases []time.Duration) map[string]int64 {
	m := map[string]int64{}
	for i, k := range kinds {
		if i < len(leases) && leases[i] > 0 {
			m[k] = leases[i].Microseconds()
		}
	}
	return m
}

func held(h driver.HeldJob) []any {
	return []any{sql.Named("id", h.ID), sql.Named("attempt", h.Attempt), sql.Named("worker", h.WorkerID)}
}

// JobClaim claims in one statement on the writer: the single writer
// serialises claims, so no two workers take the same job.
func (e executor) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	if p.Max <= 0 {
		return nil, nil
	}
	if p.Fair != nil && p.Tenant == nil && !p.Flow { // limits come first: a flow claim is not fair
		return e.jobClaimFair(ctx, p)
	}
	leaseKinds := p.Kinds
	if p.LeaseKinds != nil {
		leaseKinds = p.LeaseKinds
	}
	leases := kindLeases(leaseKinds, p.Leases)
	kinds := p.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	_, now, _ := nowArgs()
	rank, runAt, id := int64(-1), int64(0), int64(0) // before every job
	if a := p.After; a != nil {
		rank, runAt, id = int64(10-a.Priority), a.RunAt.UnixMicro(), a.ID
	}
	args := []any{sql.Named("queue", p.Queue), sql.Named("worker", p.WorkerID),
		sql.Named("after_rank", rank), sql.Named("after_run_at", runAt), sql.Named("after_id", id),
		sql.Named("kinds_any", len(p.Kinds) == 0), sql.Named("kinds", jsonText(kinds)),
		sql.Named("leases", jsonText(leases)), sql.Named("default_lease", p.DefaultLease.Microseconds()),
		sql.Named("max", p.Max), sql.Named("tenant", nullableString(p.Tenant))}
	if p.Flow {
		return e.jobClaimFlow(ctx, p, args)
	}
	jobs, err := scanJobs(e.wquery(ctx, "JobClaim", append(args, now)...))
	if err != nil {
		return nil, fmt.Errorf("claim jobs in queue %q: %w", p.Queue, err)
	}
	// RETURNING has no order: put the claims back in claim order.
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].Key().Before(jobs[k].Key()) })
	return jobs, nil
}

type heldEntry struct {
	ID      int64 `json:"id"`
	Attempt int   `json:"attempt"`
	Lease   int64 `json:"lease,omitempty"`
	Result  any   `json:"result,omitempty"`
}

func (e executor) JobHeartbeat(ctx context.Context, p driver.HeartbeatParams) ([]driver.HeartbeatResult, error) {
	batch := make([]heldEntry, len(p.IDs))
	for i, id := range p.IDs {
		batch[i] = heldEntry{ID: id, Attempt: p.Attempts[i], Lease: p.Leases[i].Microseconds()}
	}
	_, now, _ := nowArgs()
	return collect(scanHeartbeat)(e.wquery(ctx, "JobHeartbeat", sql.Named("batch", jsonText(batch)),
		sql.Named("worker", p.WorkerID), now))
}

func scanHeartbeat(s scanner) (driver.HeartbeatResult, error) {
	var h driver.HeartbeatResult
	var lease storedMicros
	err := s.Scan(&h.ID, &lease, &h.CancelRequested, &h.PauseRequested)
	h.LeaseUntil = lease.time()
	return h, err
}

// JobCompleteMany finishes a batch in one transaction; the jobs must share
// a worker id (one process flushes its own).
func (e executor) JobCompleteMany(ctx context.Context, jobs []driver.CompleteParams) ([]driver.CompletedJob, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	batch := make([]heldEntry, len(jobs))
	for i, c := range jobs {
		if c.WorkerID != jobs[0].WorkerID {
			return nil, fmt.Errorf("complete batch mixes workers %q and %q", jobs[0].WorkerID, c.WorkerID)
		}
		batch[i] = heldEntry{ID: c.ID, Attempt: c.Attempt}
		if len(c.Result) > 0 {
			batch[i].Result = c.Result
		}
	}
	var done []driver.CompletedJob
	err := e.inTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		rows, err := collect(scanCompleted)(tx.wquery(ctx, "JobCompleteArchive", sql.Named("batch", jsonText(batch)),
			sql.Named("worker", jobs[0].WorkerID), now))
		if err != nil || len(rows) == 0 {
			return err
		}
		ids := make([]int64, len(rows))
		var completed, cancelled []int64
		for i, r := range rows {
			ids[i] = r.ID
			if r.State == driver.StateCompleted {
				completed = append(completed, r.ID)
			} else {
				cancelled = append(cancelled, r.ID)
			}
		}
		if _, err := tx.wexec(ctx, "JobDeleteMany", sql.Named("ids", jsonText(ids))); err != nil {
			return err
		}
		if err := tx.settleFinished(ctx, completed, cancelled); err != nil {
			return err
		}
		done = rows
		return nil
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

// scanCompleted reads a job JobCompleteArchive finished.
func scanCompleted(s scanner) (driver.CompletedJob, error) {
	var j driver.CompletedJob
	var runAt, started storedMicros
	err := s.Scan(&j.ID, &j.State, &j.Queue, &j.Kind, &runAt, &started)
	j.RunAt = runAt.time()
	if started.valid {
		j.StartedAt = started.time()
	}
	return j, err
}

// settleFinished releases the dependents of completed jobs and settles
// those of cancelled ones.
func (e executor) settleFinished(ctx context.Context, completed, cancelled []int64) error {
	if len(completed) > 0 {
		res, err := e.wexec(ctx, "DepsOfParents", sql.Named("ids", jsonText(completed)))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if _, err := e.ReleaseWaiting(ctx); err != nil {
				return err
			}
		}
	}
	if len(cancelled) > 0 {
		return depgraph.SettleParents(ctx, e, cancelled)
	}
	return nil
}

func (e executor) RetryHeld(ctx context.Context, h driver.HeldJob, at time.Time, entry *driver.AttemptError, unspend bool) (*driver.Job, error) {
	give := 0
	if unspend {
		give = 1
	}
	_, now, _ := nowArgs()
	args := append(held(h), sql.Named("run_at", at.UnixMicro()), sql.Named("entry", errorEntry(entry)),
		sql.Named("unspend", give), now)
	j, err := scanOne(e.wquery(ctx, "JobRetryLater", args...))
	if err == driver.ErrNotFound {
		return nil, driver.ErrLeaseLost
	}
	return j, err
}

// LockHeld answers what decides how a held job's attempt ends (the single
// writer holds the lock); ErrLeaseLost when it is not held.
func (e executor) LockHeld(ctx context.Context, h driver.HeldJob) (driver.HeldState, error) {
	var s driver.HeldState
	err := e.w.QueryRowContext(ctx, q("JobHeld"), named("JobHeld", held(h)...)...).Scan(&s.Kind, &s.Attempt,
		&s.MaxRetries, &s.CancelRequested, &s.PauseRequested)
	if err == sql.ErrNoRows {
		return s, driver.ErrLeaseLost
	}
	return s, err
}

// ArchiveHeld finishes a held job as failed or cancelled; its dependents
// are the caller's to settle.
func (e executor) ArchiveHeld(ctx context.Context, h driver.HeldJob, state driver.JobState, entry *driver.AttemptError) (*driver.Job, error) {
	_, now, _ := nowArgs()
	args := append(held(h), sql.Named("state", string(state)), sql.Named("entry", errorEntry(entry)), now)
	j, err := scanOne(e.wquery(ctx, "JobArchiveHeld", args...))
	if err == driver.ErrNotFound {
		return nil, driver.ErrLeaseLost
	}
	if err != nil {
		return nil, err
	}
	if _, err := e.wexec(ctx, "JobDelete", sql.Named("id", j.ID)); err != nil {
		return nil, err
	}
	return j, nil
}

func (e executor) JobProgress(ctx context.Context, p driver.ProgressParams) (*driver.HeartbeatResult, error) {
	_, now, _ := nowArgs()
	var progress, message any
	if p.Progress != nil {
		progress = *p.Progress
	}
	if p.ProgressMessage != nil {
		message = *p.ProgressMessage
	}
	args := append(held(p.HeldJob), sql.Named("progress", progress), sql.Named("message", message),
		sql.Named("checkpoint", nullable(p.Checkpoint)), sql.Named("lease", p.Lease.Microseconds()),
		sql.Named("leases", jsonText(kindLeases(p.LeaseKinds, p.Leases))), now)
	hs, err := collect(scanHeartbeat)(e.wquery(ctx, "JobProgress", args...))
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, driver.ErrLeaseLost
	}
	return &hs[0], nil
}

func (e executor) JobGet(ctx context.Context, id int64) (*driver.Job, error) {
	return e.jobGet(ctx, e.r, id)
}

func (e executor) jobGet(ctx context.Context, on querier, id int64) (*driver.Job, error) {
	return scanOne(on.QueryContext(ctx, q("JobGet"), named("JobGet", sql.Named("id", id))...))
}

// JobCancel cancels a live job; see driver.JobStore.
func (e executor) JobCancel(ctx context.Context, id int64) (*driver.Job, error) {
	var out *driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		state, err := tx.liveState(ctx, id)
		if err != nil {
			return err
		}
		_, now, _ := nowArgs()
		if state == driver.StateRunning {
			out, err = scanOne(tx.wquery(ctx, "JobRequestCancel", sql.Named("id", id), now))
			return err
		}
		out, err = scanOne(tx.wquery(ctx, "JobArchiveLive", sql.Named("id", id), now))
		if err != nil {
			return err
		}
		if _, err := tx.wexec(ctx, "JobDelete", sql.Named("id", id)); err != nil {
			return err
		}
		return depgraph.SettleParents(ctx, tx, []int64{id})
	})
	return out, err
}

// liveState answers a live job's state; a finished job is ErrWrongState,
// an unknown one ErrNotFound.
func (e executor) liveState(ctx context.Context, id int64) (driver.JobState, error) {
	var st string
	err := e.w.QueryRowContext(ctx, q("JobLiveState"), named("JobLiveState", sql.Named("id", id))...).Scan(&st)
	if err == nil {
		return driver.JobState(st), nil
	}
	if err != sql.ErrNoRows {
		return "", err
	}
	err = e.w.QueryRowContext(ctx, q("JobArchivedState"), named("JobArchivedState", sql.Named("id", id))...).Scan(&st)
	if err == sql.ErrNoRows {
		return "", driver.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	return driver.JobState(st), fmt.Errorf("%w: job %d is %s", driver.ErrWrongState, id, st)
}

func (e executor) JobRetry(ctx context.Context, id int64) (*driver.Job, error) {
	var out *driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		j, err := scanOne(tx.wquery(ctx, "JobUnarchive", sql.Named("id", id), now))
		if err == driver.ErrNotFound {
			return tx.explainState(ctx, id, "retry")
		}
		if isUniqueViolation(err) {
			return fmt.Errorf("%w: a live job holds its idempotency key", driver.ErrWrongState)
		}
		if err != nil {
			return err
		}
		out = j
		_, err = tx.wexec(ctx, "ArchiveDelete", sql.Named("id", id))
		return err
	})
	if err == nil {
		e.notify([]string{out.Queue})
	}
	return out, err
}

func (e executor) JobPause(ctx context.Context, id int64) (*driver.Job, error) {
	_, now, _ := nowArgs()
	j, err := scanOne(e.wquery(ctx, "JobPause", sql.Named("id", id), now))
	if err == driver.ErrNotFound {
		return nil, e.explainState(ctx, id, "pause")
	}
	return j, err
}

func (e executor) JobResume(ctx context.Context, id int64) (*driver.Job, error) {
	_, now, _ := nowArgs()
	j, err := scanOne(e.wquery(ctx, "JobResume", sql.Named("id", id), now))
	if err == driver.ErrNotFound {
		return nil, e.explainState(ctx, id, "resume")
	}
	return j, err
}

// explainState turns "no row changed" into ErrNotFound or ErrWrongState.
func (e executor) explainState(ctx context.Context, id int64, op string) error {
	j, err := e.jobGet(ctx, e.w, id)
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: cannot %s job %d in state %s", driver.ErrWrongState, op, id, j.State)
}

func nullableString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// JobCompleteClaim finishes held jobs and then claims, in one transaction
// (driver.CompleteClaimStore).
func (e executor) JobCompleteClaim(ctx context.Context, done []driver.CompleteParams, p driver.ClaimParams) ([]driver.CompletedJob, []*driver.Job, error) {
	return driver.CompleteThenClaim(ctx, e.inTx, done, p)
}

var _ driver.CompleteClaimStore = executor{}
