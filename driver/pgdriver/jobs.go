package pgdriver

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// kindLeases are the arrays of kinds and their lease seconds that the claim
// and progress statements look a job's kind up in; leaseKinds names the
// leases when set, else kinds does.
func kindLeases(kinds, leaseKinds []string, leases []time.Duration) ([]string, []float64) {
	if leaseKinds != nil {
		kinds = leaseKinds
	}
	secsOf := make([]float64, len(leases))
	for i, l := range leases {
		secsOf[i] = secs(l)
	}
	return kinds, secsOf
}

func (e executor) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	if p.Fair != nil && p.Tenant == nil && !p.Flow { // limits come first: a flow claim is not fair
		return e.jobClaimFair(ctx, p)
	}
	args := newPagedClaimArgs(p)
	if p.Flow {
		return e.jobClaimFlow(ctx, p, args)
	}
	var jobs []*driver.Job
	// A claim that a crash loses only puts its jobs back to pending, to run
	// again (delivery is at least once), so its commit need not wait for the
	// WAL flush: the completion's commit does, and flushes the claim with
	// it.
	return jobs, e.pinned(ctx, claimSettings, jobClaim.SQL, jobClaim.Args(args), readClaimed(&jobs))
}

// readClaimed reads a claim's jobs into jobs, in claim order.
func readClaimed(jobs *[]*driver.Job) func(pgx.Rows, error) error {
	return func(rows pgx.Rows, err error) error {
		if *jobs, err = scanJobs(rows, err); err != nil {
			return err
		}
		// The update answers the jobs in id order: put them in claim order.
		slices.SortFunc(*jobs, func(a, b *driver.Job) int { return a.Key().Compare(b.Key()) })
		return nil
	}
}

// claimArgs are the arguments every claim statement takes.
type claimArgs struct {
	Queue        string    `sql:"queue"`
	WorkerID     string    `sql:"worker_id"`
	Kinds        []string  `sql:"kinds"` // empty: any kind
	Max          int       `sql:"max"`
	LeaseKinds   []string  `sql:"lease_kinds"`
	Leases       []float64 `sql:"leases"` // seconds, by LeaseKinds
	DefaultLease float64   `sql:"default_lease"`
}

func newClaimArgs(p driver.ClaimParams) claimArgs {
	kinds := p.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	leaseKinds, leases := kindLeases(kinds, p.LeaseKinds, p.Leases)
	return claimArgs{p.Queue, p.WorkerID, kinds, p.Max, leaseKinds, leases, secs(p.DefaultLease)}
}

// pagedClaimArgs are JobClaim's: a claim of Tenant's jobs (nil: anyone's)
// after a place in claim order, (10 - priority, run_at, id); AfterRank -1
// starts at the head.
type pagedClaimArgs struct {
	claimArgs
	Tenant     *string   `sql:"tenant"`
	AfterRank  int       `sql:"after_rank"`
	AfterRunAt time.Time `sql:"after_run_at"`
	AfterID    int64     `sql:"after_id"`
}

func newPagedClaimArgs(p driver.ClaimParams) pagedClaimArgs {
	args := pagedClaimArgs{claimArgs: newClaimArgs(p), Tenant: p.Tenant, AfterRank: -1} // before every job
	if a := p.After; a != nil {
		args.AfterRank, args.AfterRunAt, args.AfterID = 10-a.Priority, a.RunAt, a.ID
	}
	return args
}

// genericPlan makes a prepared statement run its generic plan, made once
// per connection: PostgreSQL otherwise plans the claim and the completion
// anew at every run (their custom plans look cheaper to it), and the
// planning costs more than any difference between the plans (e2e +5.6%,
// docs/performance.md). A generic plan is made from the statistics of its
// moment and does not know the batch size, so it also pins the plan that
// is right at every size: index scans, with no join to the jobs table (the
// statements find their jobs by id = ANY). Made while the table was empty,
// the plan scanned the whole table for each claim once it had grown; made
// over a large backlog, it hashed the whole table (a 1M backlog fell from
// 50k to 1.6k jobs/s); a join's plan made over a table vacuumed empty ran
// the nested loop the wrong way round. The plan tests check all three.
const genericPlan = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), " +
	"set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), " +
	"set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)"

// unpinned puts genericPlan's settings back to their values before the
// transaction, for the statements after a pinned one in the same
// transaction.
const unpinned = "SELECT set_config(name, reset_val, true) FROM pg_settings WHERE name IN " +
	"('plan_cache_mode', 'enable_seqscan', 'enable_bitmapscan', 'enable_hashjoin', 'enable_mergejoin')"

// claimSettings are genericPlan and an asynchronous commit, in one statement.
const claimSettings = genericPlan + ", set_config('synchronous_commit', 'off', true)"

// inCallerTx marks the text of a statement that runs in a caller's
// transaction, where the settings above cannot be made: a statement of its
// own (pgx prepares one per text), so that it plans as PostgreSQL chooses
// and never shares the pinned generic plan.
const inCallerTx = "\n-- in the caller's transaction"

// pinned runs the statement sql under settings in a transaction of its
// own, or, inside a caller's transaction, as a statement of its own text
// planned as PostgreSQL chooses (the settings would outlive it there).
func (e executor) pinned(ctx context.Context, settings, sql string, args []any, read func(pgx.Rows, error) error) error {
	if e.inCallersTx() {
		return read(e.q.Query(ctx, sql+inCallerTx, args...))
	}
	return e.inLocalTx(ctx, settings, sql, args, read)
}

// inCallersTx reports whether e runs in a transaction its caller opened.
func (e executor) inCallersTx() bool {
	_, ok := e.q.(pgx.Tx)
	return ok
}

// inLocalTx runs query in a transaction of its own after settings (SET
// LOCAL, or set_config(…, true)), all four statements sent as one pipeline:
// one round trip. read gets the query's rows and must close them.
func (e executor) inLocalTx(ctx context.Context, settings, query string, args []any, read func(pgx.Rows, error) error) error {
	return e.inLocalTxMany(ctx, settings, localStmt{query, args, read})
}

// localStmt is a statement of inLocalTxMany: its text, its arguments, and
// read, which gets its rows and must close them.
type localStmt struct {
	sql  string
	args []any
	read func(pgx.Rows, error) error
}

// inLocalTxMany runs stmts in order in a transaction of its own after
// settings, all sent as one pipeline.
func (e executor) inLocalTxMany(ctx context.Context, settings string, stmts ...localStmt) error {
	settings, err := e.planSettings(ctx, settings)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(settings)
	for _, s := range stmts {
		b.Queue(s.sql, s.args...)
	}
	b.Queue("COMMIT")
	br := e.q.SendBatch(ctx, b)
	defer br.Close()
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	for _, s := range stmts {
		if err := s.read(br.Query()); err != nil {
			return err
		}
	}
	if _, err := br.Exec(); err != nil {
		return err
	}
	return br.Close()
}

func (e executor) JobHeartbeat(ctx context.Context, p driver.HeartbeatParams) ([]driver.HeartbeatResult, error) {
	ids, attempts, leases := batchArgs(len(p.IDs), func(i int) (int64, int) { return p.IDs[i], p.Attempts[i] },
		func(b []byte, i int) []byte { return strconv.AppendFloat(b, secs(p.Leases[i]), 'f', -1, 64) })
	var out []driver.HeartbeatResult
	read := func(rows pgx.Rows, err error) error {
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.HeartbeatResult, error) {
			var h driver.HeartbeatResult
			err := r.Scan(&h.ID, scanTime(&h.LeaseUntil), &h.CancelRequested, &h.PauseRequested)
			return h, err
		})
		return err
	}
	args := heartbeatArgs{batchHeldArgs{p.WorkerID, ids, attempts}, leases}
	sql, values := jobHeartbeat.SQL, jobHeartbeat.Args(args)
	if citus, err := e.onCitus(ctx); err != nil {
		return nil, err
	} else if citus {
		// The shards of the jobs' queues when the holder named them all.
		sql, values = citusJobHeartbeat.SQL, citusJobHeartbeat.Args(args)
		if qs := batchQueues(len(p.IDs), func(i int) string { return queueAt(p.Queues, i) }); qs != nil {
			sql, values = citusJobHeartbeatQueues.SQL, citusJobHeartbeatQueues.Args(heartbeatQueuesArgs{args, qs})
		}
	}
	return out, e.pinned(ctx, genericPlan, sql, values, read)
}

// batchArgs answers the ids of a batch of n held jobs in id order, the
// order in which a statement takes their locks (two statements locking in
// other orders deadlocked, 40P01, in a held-transaction run), and their
// attempts and values as jsonb objects keyed by id. value appends job i's
// value as JSON, or nothing when it has none. Should a batch name a job
// twice, its later attempt counts.
func batchArgs(n int, job func(i int) (id int64, attempt int), value func(b []byte, i int) []byte) (ids []int64, attempts, values []byte) {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ida, aa := job(a)
		idb, ab := job(b)
		return cmp.Or(cmp.Compare(ida, idb), cmp.Compare(aa, ab))
	})
	ids = make([]int64, 0, n)
	attempts = append(make([]byte, 0, n*16), '{')
	values = append(make([]byte, 0, 64), '{')
	for k, i := range order {
		id, attempt := job(i)
		if k+1 < n {
			if next, _ := job(order[k+1]); next == id {
				continue // the later attempt follows
			}
		}
		if len(ids) > 0 {
			attempts = append(attempts, ',')
		}
		ids = append(ids, id)
		attempts = strconv.AppendInt(appendKey(attempts, id), int64(attempt), 10)
		mark := len(values)
		if len(values) > 1 {
			values = append(values, ',')
		}
		values = appendKey(values, id)
		keyEnd := len(values)
		if values = value(values, i); len(values) == keyEnd {
			values = values[:mark] // no value: no key
		}
	}
	return ids, append(attempts, '}'), append(values, '}')
}

// appendKey appends `"id":`, a key of the objects of batchArgs.
func appendKey(b []byte, id int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, id, 10)
	return append(b, '"', ':')
}

func (e executor) JobGet(ctx context.Context, id int64) (*driver.Job, error) {
	return scanOne(e.q.QueryRow(ctx, jobGet.SQL, jobGet.Args(idArg{id})...))
}

var (
	jobNextIDs      = bind[countArg]("JobNextIDs")
	jobClaim        = bind[pagedClaimArgs]("JobClaim")
	jobHeartbeat    = bind[heartbeatArgs]("JobHeartbeat")
	jobCompleteMany = bind[completeManyArgs]("JobCompleteMany")
	jobGet          = bind[idArg]("JobGet")
)

type countArg struct {
	Count int `sql:"count"`
}

// batchHeldArgs name a batch of WorkerID's held jobs as batchArgs answers
// them: their ids, and their attempts as a jsonb object keyed by id.
type batchHeldArgs struct {
	WorkerID string  `sql:"worker_id"`
	IDs      []int64 `sql:"ids"`
	Attempts []byte  `sql:"attempts"`
}

// heartbeatArgs give each job its lease, in seconds, keyed by id.
type heartbeatArgs struct {
	batchHeldArgs
	Leases []byte `sql:"leases"`
}

// completeManyArgs give each job its result, keyed by id (none: NULL).
type completeManyArgs struct {
	batchHeldArgs
	Results []byte `sql:"results"`
}
