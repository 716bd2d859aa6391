package pgdriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// flowSweepSetup answers a driver whose key (a concurrency of 1 and a
// rate that refills at once) has had one job, started and completed: the
// key is idle, its slot and bucket there for a sweep to drop.
func flowSweepSetup(t *testing.T, key string) (*pgdriver.Driver, *driver.InsertParams) {
	t.Helper()
	d, _ := pgtest.Schema(t)
	job := &driver.InsertParams{Kind: "k", Queue: "default", Priority: 5, MaxRetries: 3,
		Flow: &driver.FlowKeys{ConcurrencyKey: key, ConcurrencyLimit: 1, RateKey: key, Rate: 1e9, Burst: 1}}
	if _, err := d.JobInsertMany(t.Context(), []*driver.InsertParams{job}); err != nil {
		t.Fatal(err)
	}
	got := flowClaim(t, d, 1)
	if _, err := d.JobCompleteMany(t.Context(), []driver.CompleteParams{{HeldJob: driver.HeldJob{ID: got[0].ID,
		Attempt: got[0].Attempt, WorkerID: got[0].WorkerID}}}); err != nil {
		t.Fatal(err)
	}
	return d, job
}

// flowClaim makes a flow claim of default's jobs and wants n of them.
func flowClaim(t *testing.T, d *pgdriver.Driver, n int) []*driver.Job {
	t.Helper()
	got, err := d.JobClaim(t.Context(), driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 10,
		DefaultLease: time.Minute, Flow: true})
	if err != nil || len(got) != n {
		t.Fatalf("flow claim: %d jobs, %v; want %d", len(got), err, n)
	}
	return got
}

func sweepAll(ctx context.Context, s driver.FlowStore) (driver.FlowSwept, error) {
	return s.FlowSweep(ctx, driver.FlowSweepParams{Before: time.Now().Add(time.Hour), Limit: 100})
}

// A sweep while an insert of an idle key's job is in a transaction not yet
// committed: the job is not visible to it, and dropping the key's slot
// would leave the job, once committed, pending for good (a claim needs a
// free slot). The sweep passes the key over; the job is claimed.
func TestFlowSweepPassesOverAKeyAnInsertHolds(t *testing.T) {
	t.Parallel()
	key := driver.FlowKey("race", "held")
	d, job := flowSweepSetup(t, key)
	ctx := t.Context()
	tx, inTx := driverTx(t, d)
	res, err := inTx.JobInsertMany(ctx, []*driver.InsertParams{job})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sweepAll(ctx, d); err != nil || got.Read != 1 || got.Dropped != 0 {
		t.Fatalf("sweep beside the open insert: %+v, %v; want the key read and kept", got, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := flowClaim(t, d, 1); got[0].ID != res[0].Job.ID {
		t.Fatalf("claimed job %d, want %d", got[0].ID, res[0].Job.ID)
	}
}

// An insert of a key's job while a sweep that dropped the key is not yet
// committed waits for it, then makes the key again: the job is claimed.
func TestFlowInsertRemakesAKeyASweepDrops(t *testing.T) {
	t.Parallel()
	key := driver.FlowKey("race", "dropped")
	d, job := flowSweepSetup(t, key)
	ctx := t.Context()
	tx, inTx := driverTx(t, d)
	if got, err := sweepAll(ctx, inTx.(driver.FlowStore)); err != nil || got.Dropped != 1 {
		t.Fatalf("sweep in a transaction: %+v, %v; want the key dropped", got, err)
	}
	inserted := make(chan error, 1)
	go func() {
		_, err := d.JobInsertMany(ctx, []*driver.InsertParams{job})
		inserted <- err
	}()
	testwait.Until(t, 30*time.Second, "the insert waiting for the sweep's lock", func() bool {
		var n int
		err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND objsubid = 2 AND objid::text::bigint = hashtext($1)::bigint & 4294967295`, key).Scan(&n)
		return err == nil && n == 1
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-inserted; err != nil {
		t.Fatal(err)
	}
	flowClaim(t, d, 1)
}

// A live job in a spill table keeps its keys: the sweep reads the spill
// tables with the hot table.
func TestFlowSweepKeepsTheKeysOfSpilledJobs(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	pgdriver.TrustSpillTarget(d, spill(t, d, true, longLockWait).Opened)
	key := driver.FlowKey("spilled", "a")
	if _, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "k", Queue: "default", Priority: 5,
		Flow: &driver.FlowKeys{ConcurrencyKey: key, ConcurrencyLimit: 1, RateKey: key, Rate: 1e9, Burst: 1}}}); err != nil {
		t.Fatal(err)
	}
	var hot int
	if err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM ONLY skiplock_jobs`).Scan(&hot); err != nil || hot != 0 {
		t.Fatalf("%d jobs in the hot table, %v; want the job spilled", hot, err)
	}
	if got, err := sweepAll(ctx, d); err != nil || got.Read != 1 || got.Dropped != 0 {
		t.Fatalf("sweep: %+v, %v; want the key read and kept", got, err)
	}
	flowClaim(t, d, 1)
}

// Migration 027 gives the spill tables there already their key indexes
// (those made later copy the hot table's, see TestFlowSweepReadsByIndex),
// and going down takes them from every spill table, with the hot table's.
func TestFlowSweepMigrationIndexesSpillTables(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	migrateFlowSweep(t, d, false)
	spilled := spill(t, d, true, longLockWait).Opened
	if n := keyIndexes(t, d); n != 0 {
		t.Fatalf("%d key indexes before migration 027", n)
	}
	migrateFlowSweep(t, d, true)
	if n := keyIndexes(t, d); n != 4 {
		t.Fatalf("%d key indexes after migration 027, want 2 on the hot table and 2 on %s", n, spilled)
	}
	migrateFlowSweep(t, d, false)
	if n := keyIndexes(t, d); n != 0 {
		t.Fatalf("%d key indexes after migration 027 went down", n)
	}
	var src string
	if err := d.Pool().QueryRow(ctx, `SELECT prosrc FROM pg_proc WHERE oid = 'skiplock_flow_release()'::regprocedure`).Scan(&src); err != nil ||
		!strings.Contains(src, "taken_at = NULL") {
		t.Fatalf("down left skiplock_flow_release as %s, %v", src, err)
	}
	migrateFlowSweep(t, d, true)
}

// migrateFlowSweep migrates d up to the newest step, or down to the step
// before 027.
func migrateFlowSweep(t *testing.T, d *pgdriver.Driver, up bool) {
	t.Helper()
	if up {
		if _, err := d.Migrator().Up(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		return
	}
	status, err := d.Migrator().Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, m := range status {
		if m.Version >= 27 && m.Applied != nil {
			steps++
		}
	}
	if steps == 0 {
		return
	}
	if done, err := d.Migrator().Down(t.Context(), steps); err != nil || done[len(done)-1].Name != "flow_sweep" {
		t.Fatalf("down: %+v, %v", done, err)
	}
}

// keyIndexes counts the indexes on the jobs' flow keys, on the hot table
// and its spill tables.
func keyIndexes(t *testing.T, d *pgdriver.Driver) int {
	t.Helper()
	var n int
	if err := d.Pool().QueryRow(t.Context(), `SELECT count(*) FROM pg_index x
		WHERE (x.indrelid = 'skiplock_jobs'::regclass
		       OR x.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass))
		  AND pg_get_expr(x.indpred, x.indrelid) IN ('(concurrency_key IS NOT NULL)', '(rate_key IS NOT NULL)')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// driverTx begins a transaction, rolled back at the test's end unless
// committed, and answers it with the driver that works in it.
func driverTx(t *testing.T, d *pgdriver.Driver) (pgx.Tx, driver.Executor) {
	t.Helper()
	tx, err := d.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	inTx, err := d.UnwrapTx(tx)
	if err != nil {
		t.Fatal(err)
	}
	return tx, inTx
}
