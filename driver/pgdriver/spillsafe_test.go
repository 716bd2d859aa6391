package pgdriver_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// A caller's transaction puts its jobs in the hot table, whatever the
// spill target: the spill tables can be dropped under it and it goes on,
// and commits every job it inserted.
func TestHotTableSpillLeavesACallersTransactionInTheHotTable(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	holder := holdTable(t, d, url)
	pgdriver.TrustSpillTarget(d, spill(t, d, true, longLockWait).Opened)
	own, err := d.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = own.Rollback(context.Background()) }()
	pgxTx, err := d.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pgxTx.Rollback(context.Background()) }()
	callers, err := d.UnwrapTx(pgxTx)
	if err != nil {
		t.Fatal(err)
	}
	plain := func() []*driver.InsertParams {
		return []*driver.InsertParams{{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3}}
	}
	var ids []int64
	insert := func() {
		for _, e := range []driver.Executor{own, callers} {
			r, err := e.JobInsertMany(ctx, plain())
			if err != nil {
				t.Fatalf("insert in a transaction: %v", err)
			}
			fast, err := e.JobInsertFast(ctx, plain())
			if err != nil {
				t.Fatalf("insert fast in a transaction: %v", err)
			}
			ids = append(ids, r[0].Job.ID, fast[0])
		}
	}
	insert()
	endHold(t, d, holder, longLockWait) // the spill table is dropped
	insert()
	if err := own.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pgxTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	inHotTable(t, d, ids...)
}

// skiplock_enqueue() looks the spill target up, then inserts into it. A
// caller whose snapshot still names a spill table dropped since stores its
// job in the hot table, its transaction not aborted; a spill table that a
// caller's transaction has enqueued into is not dropped until it ends.
func TestSQLEnqueueOutlivesASpillTableDroppedUnderIt(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	name := spill(t, d, true, longLockWait).Opened
	caller := pgtest.Conn(t, url)
	begin := func() {
		// The first statement takes the snapshot, which sees the target.
		if _, err := caller.Exec(ctx, `BEGIN ISOLATION LEVEL REPEATABLE READ`); err != nil {
			t.Fatal(err)
		}
		if _, err := caller.Exec(ctx, `SELECT count(*) FROM skiplock_hot_spill`); err != nil {
			t.Fatal(err)
		}
	}
	enqueue := func() int64 {
		var id int64
		if err := caller.QueryRow(ctx, `SELECT id FROM skiplock_enqueue('k')`).Scan(&id); err != nil {
			t.Fatalf("enqueue: %v", err)
		}
		return id
	}
	drop := func() int64 {
		var moved int64
		if err := d.Pool().QueryRow(ctx, `SELECT skiplock_hot_spill_empty($1, true, 50)`, name).Scan(&moved); err != nil {
			t.Fatal(err)
		}
		return moved
	}
	begin()
	spilled := enqueue()
	again := enqueue() // the spill table already locked by this transaction
	if got := tableOf(t, d, again); got != "" && got != name {
		t.Fatalf("the second job went to %q", got)
	}
	if _, err := d.Pool().Exec(ctx, `UPDATE skiplock_hot_spill SET target = false`); err != nil {
		t.Fatal(err)
	}
	if moved := drop(); moved != -1 {
		t.Fatalf("dropped a spill table a caller's transaction had enqueued into: %d", moved)
	}
	if _, err := caller.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, `UPDATE skiplock_hot_spill SET target = true`); err != nil {
		t.Fatal(err)
	}
	begin() // its snapshot names the target
	if _, err := d.Pool().Exec(ctx, `UPDATE skiplock_hot_spill SET target = false`); err != nil {
		t.Fatal(err)
	}
	if moved := drop(); moved != 2 {
		t.Fatalf("drop the spill table: %d jobs moved, want 2", moved)
	}
	late := enqueue()
	if _, err := caller.Exec(ctx, `COMMIT`); err != nil {
		t.Fatalf("commit the caller's transaction: %v", err)
	}
	inHotTable(t, d, spilled, again, late)
}

// Spill tables made, filled and dropped again and again while jobs are
// inserted every way there is, from the driver's pool, in its
// transactions, in a caller's and from SQL: no insert fails, and every job
// inserted is live once the spill tables are gone, in the hot table.
func TestHotTableSpillRacingInsertsLoseNoJob(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	var inserted atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	plain := []*driver.InsertParams{{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3},
		{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3}}
	inserters := []func() error{
		func() error { _, err := d.JobInsertMany(ctx, plain); return err },
		func() error { _, err := d.JobInsertFast(ctx, plain); return err },
		func() error {
			tx, err := d.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(context.Background()) }()
			if _, err := tx.JobInsertMany(ctx, plain); err != nil {
				return err
			}
			return tx.Commit(ctx)
		},
	}
	sqlConn := pgtest.Conn(t, url)
	inserters = append(inserters, func() error {
		tx, err := sqlConn.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		for range 2 {
			if _, err := tx.Exec(ctx, `SELECT skiplock_enqueue('k')`); err != nil {
				return err
			}
		}
		return tx.Commit(ctx)
	})
	errs := make(chan error, len(inserters))
	for _, insert := range inserters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := insert(); err != nil {
					errs <- err
					return
				}
				inserted.Add(2)
			}
		}()
	}
	limits := driver.SpillLimits{LockWait: 20 * time.Millisecond}
	for opened := 0; opened < 10; {
		s := spill(t, d, true, limits)
		if s.Opened != "" {
			opened++
			pgdriver.TrustSpillTarget(d, s.Opened)
			time.Sleep(20 * time.Millisecond) // let jobs land in it
		}
		pgdriver.LookAgainAtSpills(d)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("an insert failed while spill tables came and went: %v", err)
	}
	testwait.Until(t, time.Minute, "the spill tables to be dropped", func() bool {
		pgdriver.LookAgainAtSpills(d)
		return !spill(t, d, false, limits).Active
	})
	var live, hot int64
	if err := d.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM skiplock_jobs), (SELECT count(*) FROM ONLY skiplock_jobs)`).Scan(&live, &hot); err != nil {
		t.Fatal(err)
	}
	if live != inserted.Load() || hot != live {
		t.Fatalf("%d jobs live (%d in the hot table), %d inserted", live, hot, inserted.Load())
	}
}

// A driver that sends new jobs to a spill table that has gone (dropped
// since it read the target) stores them in the hot table, whichever way
// they are inserted, flow inserts (a transaction of the driver's own)
// included; no insert fails.
func TestHotTableSpillGoneSendsJobsToTheHotTable(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	job := func() *driver.InsertParams {
		return &driver.InsertParams{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3}
	}
	key := driver.FlowKey("gone", "a")
	flow := job()
	flow.Flow = &driver.FlowKeys{ConcurrencyKey: key, ConcurrencyLimit: 1, RateKey: key, Rate: 1e9, Burst: 1}
	inserts := map[string]func() ([]int64, error){
		"one": func() ([]int64, error) {
			r, err := d.JobInsertMany(ctx, []*driver.InsertParams{job()})
			return resultIDs(r), err
		},
		"many": func() ([]int64, error) {
			r, err := d.JobInsertMany(ctx, []*driver.InsertParams{job(), job()})
			return resultIDs(r), err
		},
		"fast": func() ([]int64, error) { return d.JobInsertFast(ctx, []*driver.InsertParams{job(), job()}) },
		"start": func() ([]int64, error) {
			j, err := d.JobInsertStart(ctx, job(), driver.StartParams{WorkerID: "w", Lease: time.Minute})
			if err != nil {
				return nil, err
			}
			return []int64{j.ID}, nil
		},
		"flow": func() ([]int64, error) {
			r, err := d.JobInsertMany(ctx, []*driver.InsertParams{flow})
			return resultIDs(r), err
		},
	}
	for name, insert := range inserts {
		pgdriver.TrustSpillTarget(d, "skiplock_jobs_spill_gone")
		ids, err := insert()
		if err != nil {
			t.Fatalf("%s: insert with the spill table gone: %v", name, err)
		}
		inHotTable(t, d, ids...)
	}
}

func resultIDs(r []driver.InsertResult) []int64 {
	ids := make([]int64, len(r))
	for i, x := range r {
		ids[i] = x.Job.ID
	}
	return ids
}
