package maintenance

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

func TestVacuumerVacuumsOnlyPastTheThreshold(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	ctx := context.Background()
	leaveDeadRows(t, drv, 500)
	// A threshold above what there is: nothing to do.
	if did, err := drv.HotTableVacuum(ctx, 1<<40); err != nil || did {
		t.Fatalf("vacuumed below the threshold: %v %v", did, err)
	}
	if err := (&Vacuumer{Store: drv, DeadRows: 1}).RunOnce(ctx); err != nil {
		t.Fatalf("vacuum: %v", err)
	}
	vacuumOnceSeen(t, drv)
}

// leaveDeadRows inserts n jobs and deletes them.
func leaveDeadRows(t *testing.T, drv *pgdriver.Driver, n int) {
	t.Helper()
	jobs := make([]*driver.InsertParams, n)
	for i := range jobs {
		jobs[i] = &driver.InsertParams{Kind: "k", Queue: "default", Priority: 5, MaxRetries: 3}
	}
	if _, err := drv.JobInsertFast(t.Context(), jobs); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.Pool().Exec(t.Context(), `DELETE FROM skiplock_jobs`); err != nil {
		t.Fatal(err)
	}
}

// statsSeeDeleted waits until the statistics count n jobs inserted into
// the hot table and none live (each session sends its counts within a
// second or so of its transaction).
func statsSeeDeleted(t *testing.T, drv *pgdriver.Driver, n int) {
	t.Helper()
	testwait.Until(t, 30*time.Second, "the statistics to count the deleted burst", func() bool {
		var seen bool
		err := drv.Pool().QueryRow(t.Context(), `SELECT pg_stat_get_tuples_inserted('skiplock_jobs'::regclass) >= $1
			AND pg_stat_get_live_tuples('skiplock_jobs'::regclass) = 0`, n).Scan(&seen)
		if err != nil {
			t.Fatal(err)
		}
		return seen
	})
}

// vacuum asks for a vacuum past one dead row and answers whether it ran.
func vacuum(t *testing.T, drv *pgdriver.Driver) bool {
	t.Helper()
	did, err := drv.HotTableVacuum(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return did
}

// vacuumOnceSeen vacuums once the dead rows reach the statistics, within a
// second or so.
func vacuumOnceSeen(t *testing.T, drv *pgdriver.Driver) {
	t.Helper()
	testwait.Until(t, 30*time.Second, "dead rows to make the hot table vacuum", func() bool { return vacuum(t, drv) })
}

// holdOldestSnapshot holds a snapshot open on a connection of its own and
// waits until it is the oldest of the database (a session of the pool's
// may still be finishing), which no later one can change: a vacuum is then
// held back by it alone.
func holdOldestSnapshot(t *testing.T, drv *pgdriver.Driver, url string) *pgx.Conn {
	t.Helper()
	holder := pgtest.HoldSnapshot(t, url)
	testwait.Until(t, 30*time.Second, "the held snapshot to be the oldest", func() bool {
		var oldest bool
		err := drv.Pool().QueryRow(t.Context(), `SELECT (SELECT backend_xmin FROM pg_stat_activity WHERE pid = $1) =
			(SELECT backend_xmin FROM pg_stat_activity WHERE datname = current_database() AND backend_xmin IS NOT NULL
			  AND backend_type <> 'autovacuum worker'
			  AND pid <> pg_backend_pid() ORDER BY age(backend_xmin) DESC LIMIT 1)`, holder.PgConn().PID()).Scan(&oldest)
		if err != nil {
			t.Fatal(err)
		}
		return oldest
	})
	return holder
}

// TestVacuumerWaitsWhileASnapshotHoldsItsRowsBack: a vacuum removes no row
// deleted after the oldest snapshot; while that snapshot stays open another
// vacuum would read the whole table for nothing. Once it ends, the next
// vacuum runs.
func TestVacuumerWaitsWhileASnapshotHoldsItsRowsBack(t *testing.T) {
	t.Parallel()
	// A database of its own: the snapshots a vacuum may not pass are those
	// of its database, and other tests' sessions in a shared one could
	// hold theirs for as long as they like.
	drv, url := pgtest.Database(t)
	ctx := t.Context()
	holder := holdOldestSnapshot(t, drv, url)
	leaveDeadRows(t, drv, 500)
	vacuumOnceSeen(t, drv)
	// The snapshot kept the 500 rows: they are still dead, and still more
	// than the threshold, but vacuuming again would remove none of them.
	if vacuum(t, drv) {
		t.Fatal("vacuumed again under the same snapshot")
	}
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	if !vacuum(t, drv) {
		t.Fatal("no vacuum after the snapshot ended")
	}
}

// A hot table left large by a burst long gone, with no snapshot holding
// vacuum back, is vacuumed (its space reusable) and never rebuilt: a
// rebuild copies the live jobs while claims wait, and only a held snapshot
// makes it pay.
func TestVacuumerLeavesABurstToVacuum(t *testing.T) {
	t.Parallel()
	// A database of its own: another test's held snapshot in a shared one
	// would hold this table's vacuum back too.
	drv, _ := pgtest.Database(t)
	ctx := t.Context()
	oid := func() (o uint32) {
		t.Helper()
		if err := drv.Pool().QueryRow(ctx, `SELECT pg_relation_filenode('skiplock_jobs')`).Scan(&o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	before := oid()
	leaveDeadRows(t, drv, 20000)
	statsSeeDeleted(t, drv, 20000)
	v := &Vacuumer{Store: drv}
	vacuumed := false
	testwait.Until(t, 30*time.Second, "the burst's dead rows to be vacuumed", func() bool {
		if err := v.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		var vacuums int64
		if err := drv.Pool().QueryRow(ctx, `SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = 'skiplock_jobs'::regclass`).
			Scan(&vacuums); err != nil {
			t.Fatal(err)
		}
		vacuumed = vacuums > 0
		return vacuumed || oid() != before
	})
	for range 5 {
		if err := v.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if oid() != before {
		t.Fatal("the hot table was rebuilt after a burst, with no snapshot holding vacuum back")
	}
}

// Under a held snapshot vacuum can remove nothing deleted since: the
// vacuumer rebuilds the bloated hot table small instead.
func TestVacuumerRebuildsUnderAHeldSnapshot(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Database(t)
	ctx := t.Context()
	holder := pgtest.HoldSnapshot(t, url)
	leaveDeadRows(t, drv, 20000)
	// The rebuild measures the table against the live jobs the statistics
	// count: wait until they have the burst's delete.
	statsSeeDeleted(t, drv, 20000)
	var before int64
	if err := drv.Pool().QueryRow(ctx, `SELECT pg_total_relation_size('skiplock_jobs')`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if before < 1<<20 {
		t.Fatalf("the burst left %d bytes; the test needs 1 MiB or more", before)
	}
	v := &Vacuumer{Store: drv}
	testwait.Until(t, 60*time.Second, "the bloated hot table to be rebuilt", func() bool {
		if err := v.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		var after int64
		if err := drv.Pool().QueryRow(ctx, `SELECT pg_total_relation_size('skiplock_jobs')`).Scan(&after); err != nil {
			t.Fatal(err)
		}
		return after*10 < before
	})
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
}

// stuckBehindASnapshot answers a database whose hot table holds 20,000
// dead rows that a held snapshot (the holder) keeps vacuum from removing,
// and whose driver knows it: a vacuum has met the snapshot, and the next
// look found it still there.
func stuckBehindASnapshot(t *testing.T) (*pgdriver.Driver, *pgx.Conn) {
	t.Helper()
	drv, url := pgtest.Database(t)
	holder := holdOldestSnapshot(t, drv, url)
	leaveDeadRows(t, drv, 20000)
	statsSeeDeleted(t, drv, 20000)
	vacuumOnceSeen(t, drv)
	if vacuum(t, drv) {
		t.Fatal("vacuumed again behind the same held snapshot")
	}
	return drv, holder
}

// A held snapshot leaves the table bloated when it ends, and vacuum only
// makes that space reusable: once the hold has ended, one rebuild gives it
// back. A burst after that, with no snapshot held, is left to vacuum.
func TestVacuumerRebuildsOnceAfterAHeldSnapshot(t *testing.T) {
	t.Parallel()
	drv, holder := stuckBehindASnapshot(t)
	ctx := t.Context()
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	if !vacuum(t, drv) {
		t.Fatal("no vacuum once the snapshot was let go")
	}
	size := func() (n int64) {
		if err := drv.Pool().QueryRow(ctx, `SELECT pg_total_relation_size('skiplock_jobs')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := size()
	if before < 1<<20 {
		t.Fatalf("the burst left %d bytes; the test needs 1 MiB or more", before)
	}
	r, err := drv.HotTableRebuild(ctx, driver.RebuildLimits{})
	if err != nil || !r.Done {
		t.Fatalf("rebuild once the hold ended: %+v, %v; want done", r, err)
	}
	if after := size(); after*10 > before {
		t.Fatalf("the rebuild left %d bytes of %d", after, before)
	}
	leaveDeadRows(t, drv, 20000)
	if r, err := drv.HotTableRebuild(ctx, driver.RebuildLimits{}); err != nil || r.Done {
		t.Fatalf("rebuild after a burst with no snapshot held: %+v, %v; want none", r, err)
	}
}

// While a snapshot is held, a table of HeldBytes or more is rebuilt even
// though its live jobs would not call for it yet by the ratio.
func TestVacuumerRebuildsPastHeldBytes(t *testing.T) {
	t.Parallel()
	drv, holder := stuckBehindASnapshot(t)
	ctx := t.Context()
	live := make([]*driver.InsertParams, 100)
	for i := range live {
		live[i] = &driver.InsertParams{Kind: "k", Queue: "default", Priority: 5, MaxRetries: 3}
	}
	if _, err := drv.JobInsertFast(ctx, live); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "the statistics to count the live jobs", func() bool {
		var n int64
		if err := drv.Pool().QueryRow(ctx, `SELECT pg_stat_get_live_tuples('skiplock_jobs'::regclass)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n >= 100
	})
	byRatio := driver.RebuildLimits{Ratio: 1000, HeldBytes: 1 << 40}
	if r, err := drv.HotTableRebuild(ctx, byRatio); err != nil || r.Done {
		t.Fatalf("rebuild by a ratio of 1000 alone: %+v, %v; want none", r, err)
	}
	r, err := drv.HotTableRebuild(ctx, driver.RebuildLimits{Ratio: 1000, HeldBytes: 1 << 20})
	if err != nil || !r.Done || r.Moved != 100 {
		t.Fatalf("rebuild past 1 MiB under a held snapshot: %+v, %v; want done, 100 jobs moved", r, err)
	}
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
}

// A transaction that has read the hot table holds a lock no rebuild can
// pass: the vacuumer sends new jobs to a spill table while it lasts, and
// once it has ended takes the spill table back and rebuilds the hot table.
func TestVacuumerSpillsWhileATransactionHoldsTheTable(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := t.Context()
	holder := pgtest.HoldTable(t, url)
	leaveDeadRows(t, drv, 20000)
	statsSeeDeleted(t, drv, 20000)
	v := &Vacuumer{Store: drv, Spill: driver.SpillLimits{}}
	spillTables := func() int {
		var n int
		if err := drv.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	testwait.Until(t, 30*time.Second, "new jobs to go to a spill table", func() bool {
		if err := v.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		return spillTables() == 1
	})
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "the spill table to go and the hot table to be rebuilt", func() bool {
		if err := v.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		var size int64
		if err := drv.Pool().QueryRow(ctx, `SELECT pg_total_relation_size('skiplock_jobs')`).Scan(&size); err != nil {
			t.Fatal(err)
		}
		return spillTables() == 0 && size < 1<<20
	})
}
