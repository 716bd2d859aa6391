package pgdriver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
	"github.com/skiplock/skiplock/driver/outcome"
)

func (e executor) JobInsertFast(ctx context.Context, jobs []*driver.InsertParams) ([]int64, error) {
	ids := make([]int64, 0, len(jobs))
	err := e.inTx(ctx, func(tx executor) error {
		rows, err := tx.q.Query(ctx, q("JobNextIDs"), len(jobs))
		if err != nil {
			return err
		}
		var id int64
		dest := []any{&id} // one target for every row: a fresh one per row escapes
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		if rows.Close(); rows.Err() != nil {
			return rows.Err()
		}
		if len(ids) != len(jobs) {
			return fmt.Errorf("took %d ids from the sequence for %d jobs", len(ids), len(jobs))
		}
		src, stmt := newCopyReader(jobs, ids, time.Now())
		_, err = tx.q.(pgx.Tx).Conn().PgConn().CopyFrom(ctx, src, stmt)
		return err
	})
	return ids, err
}

func (e executor) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	kinds := p.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	leases := make([]float64, len(p.Leases))
	for i, l := range p.Leases {
		leases[i] = secs(l)
	}
	rank, runAt, id := -1, time.Time{}, int64(0) // before every job
	if a := p.After; a != nil {
		rank, runAt, id = 10-a.Priority, a.RunAt, a.ID
	}
	args := []any{p.Queue, p.WorkerID, kinds, p.Max, leases, secs(p.DefaultLease), p.Tenant, rank, runAt, id}
	var jobs []*driver.Job
	read := func(rows pgx.Rows, err error) error {
		if jobs, err = scanJobs(rows, err); err != nil {
			return err
		}
		// The update answers the jobs in id order: put them in claim order.
		slices.SortFunc(jobs, func(a, b *driver.Job) int {
			switch ka, kb := a.Key(), b.Key(); {
			case ka.Before(kb):
				return -1
			case kb.Before(ka):
				return 1
			}
			return 0
		})
		return nil
	}
	if _, inTx := e.q.(pgx.Tx); inTx {
		return jobs, read(e.q.Query(ctx, q("JobClaim")+inCallerTx, args...))
	}
	// A claim that a crash loses only puts its jobs back to pending, to run
	// again (delivery is at least once), so its commit need not wait for the
	// WAL flush: the completion's commit does, and flushes the claim with
	// it.
	return jobs, e.inLocalTx(ctx, claimSettings, q("JobClaim"), args, read)
}

// genericPlan makes a prepared statement run its generic plan, made once
// per connection: PostgreSQL otherwise plans the claim and the completion
// anew at every run (their custom plans look cheaper to it), and the
// planning costs more than any difference between the plans (e2e +5.6%,
// docs/performance.md). A generic plan is made from the statistics of its
// moment and does not know the batch size, so it also pins the plan that
// is right at every size: index scans joined by nested loop. Made while the
// table was empty, the plan scanned the whole table for each claim once it
// had grown; made over a large backlog, it hashed the whole table (a 1M
// backlog fell from 50k to 1.6k jobs/s). TestClaimGenericPlanFindsJobsByKey
// checks both.
const genericPlan = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), " +
	"set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), " +
	"set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)"

// claimSettings are genericPlan and an asynchronous commit, in one statement.
const claimSettings = genericPlan + ", set_config('synchronous_commit', 'off', true)"

// inCallerTx marks the text of a statement that runs in a caller's
// transaction, where the settings above cannot be made: a statement of its
// own (pgx prepares one per text), so that it plans as PostgreSQL chooses
// and never shares the pinned generic plan.
const inCallerTx = "\n-- in the caller's transaction"

// inLocalTx runs query in a transaction of its own after settings (SET
// LOCAL, or set_config(…, true)), all four statements sent as one pipeline:
// one round trip. read gets the query's rows and must close them.
func (e executor) inLocalTx(ctx context.Context, settings, query string, args []any, read func(pgx.Rows, error) error) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(settings)
	b.Queue(query, args...)
	b.Queue("COMMIT")
	br := e.q.SendBatch(ctx, b)
	defer br.Close()
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	if err := read(br.Query()); err != nil {
		return err
	}
	if _, err := br.Exec(); err != nil {
		return err
	}
	return br.Close()
}

// byID answers the indexes 0…n-1 in the order of their ids. Statements
// that lock a batch of jobs and wait for locks (the heartbeat, the
// completion) take them in id order, so that two of them never each hold a
// lock the other waits for: a heartbeat in the order of a map and a
// completion in the order jobs finished deadlocked (40P01) in a
// held-transaction run.
func byID(n int, id func(int) int64) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(id(a), id(b)) })
	return order
}

func (e executor) JobHeartbeat(ctx context.Context, p driver.HeartbeatParams) ([]driver.HeartbeatResult, error) {
	n := len(p.IDs)
	ids, attempts, leases := make([]int64, n), make([]int, n), make([]float64, n)
	for k, i := range byID(n, func(i int) int64 { return p.IDs[i] }) {
		ids[k], attempts[k], leases[k] = p.IDs[i], p.Attempts[i], secs(p.Leases[i])
	}
	rows, err := e.q.Query(ctx, q("JobHeartbeat"), p.WorkerID, ids, attempts, leases)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.HeartbeatResult, error) {
		var h driver.HeartbeatResult
		err := r.Scan(&h.ID, &h.LeaseUntil, &h.CancelRequested)
		h.LeaseUntil = h.LeaseUntil.UTC()
		return h, err
	})
}

// JobCompleteMany finishes a batch in one statement; the jobs must share a
// worker id (one process flushes its own).
func (e executor) JobCompleteMany(ctx context.Context, jobs []driver.CompleteParams) ([]int64, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	ids, attempts, results, err := completeArgs(jobs)
	if err != nil {
		return nil, err
	}
	var done []int64
	var released int64
	read := func(rows pgx.Rows, err error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		var id int64
		dest := []any{&id, nil, &released} // one target for every row; the state is not read
		done = make([]int64, 0, len(jobs))
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			done = append(done, id)
		}
		return rows.Err()
	}
	args := []any{jobs[0].WorkerID, ids, attempts, results}
	if _, inTx := e.q.(pgx.Tx); inTx {
		err = read(e.q.Query(ctx, q("JobCompleteMany")+inCallerTx, args...))
	} else {
		err = e.inLocalTx(ctx, genericPlan, q("JobCompleteMany"), args, read)
	}
	if err != nil {
		return nil, err
	}
	if released > 0 {
		_, err = e.ReleaseWaiting(ctx) // and wakes their queues
	}
	return done, err
}

// completeArgs answers JobCompleteMany's ids in id order (the order in
// which the statement locks them), and the attempts and results as jsonb
// objects keyed by id; results holds only the jobs that have one. Should a
// batch hold two attempts of one job, the later one counts.
func completeArgs(jobs []driver.CompleteParams) (ids []int64, attempts, results []byte, err error) {
	order := make([]int, len(jobs))
	for i, c := range jobs {
		if c.WorkerID != jobs[0].WorkerID {
			return nil, nil, nil, fmt.Errorf("complete batch mixes workers %q and %q", jobs[0].WorkerID, c.WorkerID)
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(jobs[a].ID, jobs[b].ID), cmp.Compare(jobs[a].Attempt, jobs[b].Attempt))
	})
	ids = make([]int64, 0, len(jobs))
	attempts = append(make([]byte, 0, len(jobs)*16), '{')
	results = append(make([]byte, 0, 64), '{')
	for k, i := range order {
		c := jobs[i]
		if k+1 < len(order) && jobs[order[k+1]].ID == c.ID {
			continue // the later attempt of the job follows
		}
		if len(ids) > 0 {
			attempts = append(attempts, ',')
		}
		ids = append(ids, c.ID)
		attempts = strconv.AppendInt(appendKey(attempts, c.ID), int64(c.Attempt), 10)
		if len(c.Result) > 0 {
			if len(results) > 1 {
				results = append(results, ',')
			}
			results = append(appendKey(results, c.ID), c.Result...)
		}
	}
	return ids, append(attempts, '}'), append(results, '}'), nil
}

// appendKey appends `"id":`, a key of the objects of completeArgs.
func appendKey(b []byte, id int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, id, 10)
	return append(b, '"', ':')
}

func (e executor) JobFail(ctx context.Context, p driver.FailParams) (*driver.Job, error) {
	var out *driver.Job
	err := e.inTx(ctx, func(tx executor) (err error) {
		out, err = outcome.Fail(ctx, tx, p)
		return err
	})
	return out, err
}

func (e executor) JobSnooze(ctx context.Context, p driver.SnoozeParams) (*driver.Job, error) {
	var out *driver.Job
	err := e.inTx(ctx, func(tx executor) (err error) {
		out, err = outcome.Snooze(ctx, tx, p)
		return err
	})
	return out, err
}

func (e executor) LockHeld(ctx context.Context, h driver.HeldJob) (cancelRequested bool, err error) {
	err = e.q.QueryRow(ctx, q("JobHeldForUpdate"), h.ID, h.Attempt, h.WorkerID).Scan(&cancelRequested)
	if err == pgx.ErrNoRows {
		return false, driver.ErrLeaseLost
	}
	return cancelRequested, err
}

func (e executor) RetryHeld(ctx context.Context, h driver.HeldJob, at time.Time, entry *driver.AttemptError, unspend bool) (*driver.Job, error) {
	give := 0
	if unspend {
		give = 1
	}
	j, err := scanOne(e.q.QueryRow(ctx, q("JobRetryLater"), h.ID, h.Attempt, h.WorkerID, at, errorEntry(entry), give))
	if err == driver.ErrNotFound {
		return nil, driver.ErrLeaseLost
	}
	return j, err
}

func (e executor) ArchiveHeld(ctx context.Context, h driver.HeldJob, state driver.JobState, entry *driver.AttemptError) (*driver.Job, error) {
	j, err := scanOne(e.q.QueryRow(ctx, q("JobArchiveHeld"), h.ID, h.Attempt, h.WorkerID, string(state), errorEntry(entry)))
	if err == driver.ErrNotFound {
		return nil, driver.ErrLeaseLost
	}
	if err != nil {
		return nil, err
	}
	return j, depgraph.SettleParents(ctx, e, []int64{j.ID})
}

var _ outcome.Store = executor{}

func (e executor) JobProgress(ctx context.Context, p driver.ProgressParams) (*driver.HeartbeatResult, error) {
	var h driver.HeartbeatResult
	err := e.q.QueryRow(ctx, q("JobProgress"), p.ID, p.Attempt, p.WorkerID, p.Progress, p.ProgressMessage,
		nullable(p.Checkpoint), secs(p.Lease)).Scan(&h.ID, &h.LeaseUntil, &h.CancelRequested)
	if err == pgx.ErrNoRows {
		return nil, driver.ErrLeaseLost
	}
	h.LeaseUntil = h.LeaseUntil.UTC()
	return &h, err
}

func (e executor) JobGet(ctx context.Context, id int64) (*driver.Job, error) {
	return scanOne(e.q.QueryRow(ctx, q("JobGet"), id))
}

func (e executor) JobList(ctx context.Context, p driver.ListParams) ([]*driver.Job, error) {
	live, archived := len(p.States) == 0, len(p.States) == 0
	states := make([]string, len(p.States))
	for i, s := range p.States {
		states[i] = string(s)
		live = live || !s.Finished()
		archived = archived || s.Finished()
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return scanJobs(e.q.Query(ctx, q("JobList"), live, states, p.Kind, p.Queue, p.Tenant, p.WorkflowID,
		p.BeforeID, limit, archived))
}

// JobCancel cancels a live job; see driver.JobStore.
func (e executor) JobCancel(ctx context.Context, id int64) (*driver.Job, error) {
	var out *driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		state, err := tx.liveState(ctx, id)
		if err != nil {
			return err
		}
		if state == driver.StateRunning {
			out, err = scanOne(tx.q.QueryRow(ctx, q("JobRequestCancel"), id))
			return err
		}
		out, err = scanOne(tx.q.QueryRow(ctx, q("JobArchiveLive"), id, "[]"))
		if err != nil {
			return err
		}
		return depgraph.SettleParents(ctx, tx, []int64{id})
	})
	return out, err
}

// liveState locks a live job and answers its state; a finished job is
// ErrWrongState, an unknown one ErrNotFound.
func (e executor) liveState(ctx context.Context, id int64) (driver.JobState, error) {
	var st string
	err := e.q.QueryRow(ctx, q("JobLiveForUpdate"), id).Scan(&st)
	if err == nil {
		return driver.JobState(st), nil
	}
	if err != pgx.ErrNoRows {
		return "", err
	}
	err = e.q.QueryRow(ctx, q("JobArchivedState"), id).Scan(&st)
	if err == pgx.ErrNoRows {
		return "", driver.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	return driver.JobState(st), fmt.Errorf("%w: job %d is %s", driver.ErrWrongState, id, st)
}

func (e executor) JobRetry(ctx context.Context, id int64) (*driver.Job, error) {
	j, err := scanOne(e.q.QueryRow(ctx, q("JobUnarchive"), id))
	if err == driver.ErrNotFound {
		return nil, e.explainState(ctx, id, "retry")
	}
	if isUniqueViolation(err) {
		return nil, fmt.Errorf("%w: a live job holds its idempotency key", driver.ErrWrongState)
	}
	return j, err
}

func (e executor) JobPause(ctx context.Context, id int64) (*driver.Job, error) {
	j, err := scanOne(e.q.QueryRow(ctx, q("JobPause"), id))
	if err == driver.ErrNotFound {
		return nil, e.explainState(ctx, id, "pause")
	}
	return j, err
}

func (e executor) JobResume(ctx context.Context, id int64) (*driver.Job, error) {
	j, err := scanOne(e.q.QueryRow(ctx, q("JobResume"), id))
	if err == driver.ErrNotFound {
		return nil, e.explainState(ctx, id, "resume")
	}
	return j, err
}

// explainState turns "no row changed" into ErrNotFound or ErrWrongState.
func (e executor) explainState(ctx context.Context, id int64, op string) error {
	j, err := e.JobGet(ctx, id)
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: cannot %s job %d in state %s", driver.ErrWrongState, op, id, j.State)
}
