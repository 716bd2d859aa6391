package pgdriver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
)

// jobClaimFlow is JobClaim honouring flow keys, in one statement
// (JobClaimFlow), under the same settings as the claim.
func (e executor) jobClaimFlow(ctx context.Context, p driver.ClaimParams, args pagedClaimArgs) ([]*driver.Job, error) {
	if err := e.flowTriggersMade(ctx); err != nil {
		return nil, err
	}
	var jobs []*driver.Job
	read := func(rows pgx.Rows, err error) error {
		if jobs, err = scanJobs(rows, err); err != nil {
			return err
		}
		slices.SortFunc(jobs, func(a, b *driver.Job) int { return a.Key().Compare(b.Key()) })
		return nil
	}
	flowArgs := jobClaimFlow.Args(flowClaimArgs{args, p.Max * driver.FlowScanFactor})
	return jobs, e.pinned(ctx, flowClaimSettings, jobClaimFlow.SQL, flowArgs, read)
}

// flowTriggers remembers that the triggers that free a job's concurrency
// slot are made (migration 036); pool is where they are made.
type flowTriggers struct {
	pool *pgxpool.Pool
	made atomic.Bool
	// retryAt: after a try that failed, none before this (each try may
	// hold the hot path up for flowTriggersLockWait).
	mu      sync.Mutex
	retryAt time.Time
}

// flowTriggersMade makes the triggers that free a job's concurrency slot,
// once per driver, before the first claim that can take one: until then no
// claim or completion pays for them (migration 036). They are made in a
// short transaction of its own on the pool, never in the claim's: a
// rollback there would take them away after this driver noted them made,
// and a transaction that has written jobs would wait for itself. Making
// them takes the hot table's SHARE ROW EXCLUSIVE lock, which claims,
// completions and inserts queue behind: each lock waits at most
// flowTriggersLockWait, and after a try that failed the driver's flow
// claims fail for flowTriggersRetry before the next. A schema before
// migration 036 has them from its migrations. Citus has none and refuses
// flow keys.
func (e executor) flowTriggersMade(ctx context.Context) error {
	if e.flow == nil || e.flow.made.Load() { // nil: a migration's executor, which never claims
		return nil
	}
	if citus, err := e.onCitus(ctx); err != nil || citus {
		return err
	}
	e.flow.mu.Lock()
	defer e.flow.mu.Unlock()
	if e.flow.made.Load() {
		return nil
	}
	if wait := time.Until(e.flow.retryAt); wait > 0 {
		return fmt.Errorf("make the flow triggers: the last try failed; the next in %s", wait.Round(time.Millisecond))
	}
	err := pgx.BeginFunc(ctx, e.flow.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", flowTriggersLockWait.Milliseconds())); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT skiplock_flow_triggers_make()")
		return err
	})
	if hasCode(err, "42883") { // undefined_function: a schema before 036
		return nil
	}
	if err != nil {
		if ctx.Err() == nil { // the caller's end is no reason to wait
			e.flow.retryAt = time.Now().Add(flowTriggersRetry)
		}
		return fmt.Errorf("make the flow triggers: %w", err)
	}
	e.flow.made.Store(true)
	return nil
}

// flowTriggersLockWait is how long making the flow triggers waits for
// each lock; flowTriggersRetry, how long after a try that failed the next
// may be made.
const (
	flowTriggersLockWait = 200 * time.Millisecond
	flowTriggersRetry    = 2 * time.Second
)

// flowClaimSettings are claimSettings with hash and merge joins allowed:
// the flow claim joins its own small results (candidates, keys, slots),
// which nested loops join in quadratic time.
const flowClaimSettings = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), " +
	"set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), " +
	"set_config('synchronous_commit', 'off', true)"

// insertFlow runs insert and sets the flow keys of the jobs it inserted
// (duplicates keep theirs) in one transaction, after making their slots
// and buckets.
func (e executor) insertFlow(ctx context.Context, jobs []*driver.InsertParams,
	insert func(tx executor) ([]int64, []bool, error)) ([]int64, []bool, error) {
	var ids []int64
	var dups []bool
	err := e.inTx(ctx, func(tx executor) error {
		var err error
		if ids, dups, err = insert(tx); err != nil {
			return err
		}
		return tx.flowTag(ctx, jobs, ids, dups)
	})
	return ids, dups, err
}

// flowTag sets the flow keys of the jobs just inserted (ids; duplicates
// keep theirs), after locking the keys against a sweep (FlowKeysLock) and
// making their slots and buckets: one pipeline, in the insert's
// transaction, whose locks hold until it commits.
func (e executor) flowTag(ctx context.Context, jobs []*driver.InsertParams, ids []int64, dups []bool) error {
	t := gatherFlowTags(jobs, ids, dups)
	if len(t.tag.IDs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	b.Queue(flowKeysLock.SQL, flowKeysLock.Args(keysArg{t.keys()})...)
	// Keys in order: two inserts never wait on each other's keys crosswise.
	if len(t.slots) > 0 {
		keys := sortedKeys(t.slots)
		n := make([]int32, len(keys))
		for i, k := range keys {
			n[i] = int32(t.slots[k])
		}
		b.Queue(flowSlotsEnsure.SQL, flowSlotsEnsure.Args(slotsArgs{keys, n})...)
	}
	if len(t.buckets) > 0 {
		keys := sortedKeys(t.buckets)
		rates, bursts := make([]float64, len(keys)), make([]float64, len(keys))
		for i, k := range keys {
			rates[i], bursts[i] = t.buckets[k].rate, t.buckets[k].burst
		}
		b.Queue(flowBucketsEnsure.SQL, flowBucketsEnsure.Args(bucketsArgs{keys, rates, bursts})...)
	}
	b.Queue(flowTag.SQL, flowTag.Args(t.tag)...)
	return e.q.SendBatch(ctx, b).Close()
}

// flowTags are the keys of an insert's jobs: each job's, and the slots and
// buckets they need.
type flowTags struct {
	tag     tagArgs
	slots   map[string]int
	buckets map[string]flowBucket
}

type flowBucket struct{ rate, burst float64 }

func gatherFlowTags(jobs []*driver.InsertParams, ids []int64, dups []bool) flowTags {
	t := flowTags{slots: map[string]int{}, buckets: map[string]flowBucket{}}
	for i, p := range jobs {
		if p.Flow == nil || dups != nil && dups[i] {
			continue
		}
		f := p.Flow
		t.tag.IDs = append(t.tag.IDs, ids[i])
		t.tag.ConcurrencyKeys = append(t.tag.ConcurrencyKeys, f.ConcurrencyKey)
		t.tag.RateKeys = append(t.tag.RateKeys, f.RateKey)
		if f.ConcurrencyKey != "" {
			t.slots[f.ConcurrencyKey] = f.ConcurrencyLimit
		}
		if f.RateKey != "" {
			t.buckets[f.RateKey] = flowBucket{f.Rate, f.Burst}
		}
	}
	return t
}

// keys answers every key of t once, in order.
func (t flowTags) keys() []string {
	keys := append(sortedKeys(t.slots), sortedKeys(t.buckets)...)
	slices.Sort(keys)
	return slices.Compact(keys)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (e executor) FlowUsage(ctx context.Context) ([]driver.FlowUse, error) {
	rows, err := e.q.Query(ctx, q("FlowUsage"))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.FlowUse, error) {
		var u driver.FlowUse
		var at time.Time
		err := r.Scan(&u.Key, &u.Running, &u.Slots, &u.Tokens, &u.Burst, &u.Rate, &u.Rated, &at)
		u.At = at.UTC()
		return u, err
	})
}

var _ driver.FlowStore = executor{}

// withoutFlow answers copies of jobs without their flow keys, for the
// insert that insertFlow wraps.
func withoutFlow(jobs []*driver.InsertParams) []*driver.InsertParams {
	out := make([]*driver.InsertParams, len(jobs))
	for i, p := range jobs {
		c := *p
		c.Flow = nil
		out[i] = &c
	}
	return out
}

// insertManyFlow is JobInsertMany for a batch with flow keys.
func (e executor) insertManyFlow(ctx context.Context, jobs []*driver.InsertParams) ([]driver.InsertResult, error) {
	var res []driver.InsertResult
	_, _, err := e.insertFlow(ctx, jobs, func(tx executor) ([]int64, []bool, error) {
		var err error
		if res, err = tx.JobInsertMany(ctx, withoutFlow(jobs)); err != nil {
			return nil, nil, err
		}
		ids, dups := make([]int64, len(res)), make([]bool, len(res))
		for i, r := range res {
			ids[i], dups[i] = r.Job.ID, r.Duplicate
		}
		return ids, dups, nil
	})
	return res, err
}

// insertFastFlow is JobInsertFast for a batch with flow keys.
func (e executor) insertFastFlow(ctx context.Context, jobs []*driver.InsertParams) ([]int64, error) {
	ids, _, err := e.insertFlow(ctx, jobs, func(tx executor) ([]int64, []bool, error) {
		ids, err := tx.JobInsertFast(ctx, withoutFlow(jobs))
		return ids, nil, err
	})
	return ids, err
}

func (e executor) FlowTag(ctx context.Context, ids []int64, keys []*driver.FlowKeys) error {
	jobs := make([]*driver.InsertParams, len(ids))
	for i, k := range keys {
		jobs[i] = &driver.InsertParams{Flow: k}
	}
	return e.inTx(ctx, func(tx executor) error { return tx.flowTag(ctx, jobs, ids, nil) })
}

var (
	jobClaimFlow      = bind[flowClaimArgs]("JobClaimFlow")
	flowTag           = bind[tagArgs]("FlowTag")
	flowSlotsEnsure   = bind[slotsArgs]("FlowSlotsEnsure")
	flowBucketsEnsure = bind[bucketsArgs]("FlowBucketsEnsure")
	flowKeysLock      = bind[keysArg]("FlowKeysLock")
)

// keysArg are flow keys.
type keysArg struct {
	Keys []string `sql:"keys"`
}

// flowClaimArgs are JobClaim's and the number of pending jobs read, Scan.
type flowClaimArgs struct {
	pagedClaimArgs
	Scan int `sql:"scan"`
}

// tagArgs set the flow keys of the jobs IDs ("": none), by index.
type tagArgs struct {
	IDs             []int64  `sql:"ids"`
	ConcurrencyKeys []string `sql:"concurrency_keys"`
	RateKeys        []string `sql:"rate_keys"`
}

// slotsArgs give each concurrency key its number of slots, by index.
type slotsArgs struct {
	Keys  []string `sql:"keys"`
	Slots []int32  `sql:"slots"`
}

// bucketsArgs give each rate key its rate and burst, by index.
type bucketsArgs struct {
	Keys   []string  `sql:"keys"`
	Rates  []float64 `sql:"rates"`
	Bursts []float64 `sql:"bursts"`
}
