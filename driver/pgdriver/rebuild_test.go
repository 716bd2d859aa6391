package pgdriver_test

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

// anySize rebuilds the hot table whatever its size, waiting for its lock
// as long as a loaded machine may need (autovacuum holds a lock that
// conflicts with the rebuild's, and yields only after a second).
var anySize = driver.RebuildLimits{Force: true, LockWait: 10 * time.Second}

// hotTableShape answers what makes the hot table what it is, by name: its
// rows, indexes, constraints, triggers, storage parameters and grants.
func hotTableShape(t *testing.T, d *pgdriver.Driver) map[string]string {
	t.Helper()
	queries := map[string]string{
		"rows": `SELECT coalesce(json_agg(j ORDER BY id)::text, '') FROM skiplock_jobs j`,
		"indexes": `SELECT string_agg(indexdef, E'\n' ORDER BY indexname) FROM pg_indexes
			WHERE schemaname = current_schema() AND tablename = 'skiplock_jobs'`,
		"constraints": `SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), E'\n' ORDER BY conname)
			FROM pg_constraint WHERE conrelid = 'skiplock_jobs'::regclass`,
		"triggers": `SELECT string_agg(pg_get_triggerdef(oid), E'\n' ORDER BY tgname)
			FROM pg_trigger WHERE tgrelid = 'skiplock_jobs'::regclass AND NOT tgisinternal`,
		"options": `SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = 'skiplock_jobs'::regclass`,
		"grants":  `SELECT coalesce(array_to_string(relacl, ','), '') FROM pg_class WHERE oid = 'skiplock_jobs'::regclass`,
		"columns": `SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod) || ' ' || attnotnull || ' ' ||
			coalesce(pg_get_expr(d.adbin, d.adrelid), ''), E'\n' ORDER BY attnum)
			FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
			WHERE attrelid = 'skiplock_jobs'::regclass AND attnum > 0 AND NOT attisdropped`,
	}
	shape := map[string]string{}
	for name, q := range queries {
		var v string
		if err := d.Pool().QueryRow(t.Context(), q).Scan(&v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		shape[name] = v
	}
	return shape
}

func hotTableFile(t *testing.T, d *pgdriver.Driver) uint32 {
	t.Helper()
	var oid uint32
	if err := d.Pool().QueryRow(t.Context(), `SELECT pg_relation_filenode('skiplock_jobs')`).Scan(&oid); err != nil {
		t.Fatal(err)
	}
	return oid
}

func rebuild(t *testing.T, d *pgdriver.Driver, limits driver.RebuildLimits) driver.Rebuild {
	t.Helper()
	r, err := d.HotTableRebuild(t.Context(), limits)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	return r
}

// A rebuild gives the table new files holding every live job as it was,
// and keeps its indexes, constraints, triggers, storage parameters and
// grants; ids go on from the same sequence, and statements prepared before
// it keep working after.
func TestHotTableRebuildKeepsJobsAndShape(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	_, ids := insertFast(t, d, 200, func(i int, p *driver.InsertParams) {
		p.Priority = i % 10
		p.Payload = []byte(`{"n": 1}`)
		if i%3 == 0 {
			p.RunAt = time.Now().Add(time.Hour)
		}
	})
	if _, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", Max: 50, WorkerID: "w", DefaultLease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	// Flow control's triggers, as a flow claim makes them.
	if _, err := d.Pool().Exec(ctx, `SELECT skiplock_flow_triggers_make(); GRANT SELECT ON skiplock_jobs TO PUBLIC`); err != nil {
		t.Fatal(err)
	}
	before, oid := hotTableShape(t, d), hotTableFile(t, d)
	for name, v := range before {
		if v == "" && name != "grants" {
			t.Fatalf("the hot table has no %s to compare", name)
		}
	}
	r := rebuild(t, d, anySize)
	if !r.Done || r.Moved != 200 || r.BytesAfter <= 0 {
		t.Fatalf("rebuild: %+v, want done with 200 jobs moved", r)
	}
	if hotTableFile(t, d) == oid {
		t.Fatal("the hot table kept its files in a rebuild")
	}
	after := hotTableShape(t, d)
	for name, v := range before {
		if after[name] != v {
			t.Errorf("%s changed in the rebuild:\nbefore %s\nafter  %s", name, v, after[name])
		}
	}
	_, more := insertFast(t, d, 10, nil)
	if more[0] <= ids[len(ids)-1] {
		t.Fatalf("ids went back after the rebuild: %d after %d", more[0], ids[len(ids)-1])
	}
	claimed, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", Max: 1000, WorkerID: "w", DefaultLease: time.Minute})
	if err != nil || len(claimed) != 200-50-67+10 {
		t.Fatalf("claim after the rebuild: %d jobs, %v; want %d", len(claimed), err, 200-50-67+10)
	}
}

// A snapshot held open keeps vacuum from removing the rows that die after
// it; a rebuild frees them all the same, and the snapshot lives on.
func TestHotTableRebuildFreesWhatAHeldSnapshotKeeps(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Database(t)
	ctx := t.Context()
	holder := pgtest.HoldSnapshot(t, url)
	for range 5 {
		insertFast(t, d, 2000, nil)
		if _, err := d.Pool().Exec(ctx, `DELETE FROM skiplock_jobs`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Pool().Exec(ctx, `VACUUM skiplock_jobs`); err != nil {
		t.Fatal(err)
	}
	r := rebuild(t, d, anySize)
	if !r.Done || r.Moved != 0 {
		t.Fatalf("rebuild: %+v, want done with nothing to move", r)
	}
	if r.BytesAfter*4 > r.BytesBefore {
		t.Fatalf("the rebuild freed little: %d bytes before, %d after", r.BytesBefore, r.BytesAfter)
	}
	var one int
	if err := holder.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
		t.Fatalf("the held transaction after the rebuild: %v", err)
	}
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
}

// A transaction that has read the hot table holds a lock on it: the
// rebuild waits for it no longer than LockWait, and once that transaction
// has been open for seconds, does not try, but names it.
func TestHotTableRebuildLeavesALockHolder(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	insertFast(t, d, 10, nil)
	holder := pgtest.Conn(t, url)
	if _, err := holder.Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, `SELECT count(*) FROM skiplock_jobs`); err != nil {
		t.Fatal(err)
	}
	oid := hotTableFile(t, d)
	if r := rebuild(t, d, driver.RebuildLimits{Force: true, LockWait: 10 * time.Millisecond}); r.Done {
		t.Fatalf("rebuilt under another transaction's lock: %+v", r)
	}
	testwait.Until(t, 30*time.Second, "the holder to be named", func() bool {
		r := rebuild(t, d, driver.RebuildLimits{Force: true, LockWait: 10 * time.Millisecond})
		if r.Done {
			t.Fatalf("rebuilt under another transaction's lock: %+v", r)
		}
		return r.HeldBy != ""
	})
	if hotTableFile(t, d) != oid {
		t.Fatal("the hot table changed under the holder's lock")
	}
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	if r := rebuild(t, d, anySize); !r.Done || r.HeldBy != "" || r.Moved != 10 {
		t.Fatalf("rebuild after the holder ended: %+v", r)
	}
}

// More live jobs than MaxRows: no rebuild, whatever the statistics said.
func TestHotTableRebuildRefusesTooManyJobs(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	insertFast(t, d, 20, nil)
	oid := hotTableFile(t, d)
	if r := rebuild(t, d, driver.RebuildLimits{Force: true, MaxRows: 10}); r.Done || r.Refused != "more than 10 jobs live" {
		t.Fatalf("rebuild with 20 jobs live, 10 allowed: %+v", r)
	}
	// The statistics may not have counted the jobs yet: the rebuild itself
	// counts them and gives up.
	var got int64
	if err := d.Pool().QueryRow(t.Context(), `SELECT skiplock_hot_table_rebuild(10, 50)`).Scan(&got); err != nil || got != -2 {
		t.Fatalf("skiplock_hot_table_rebuild(10, 50) = %d, %v; want -2", got, err)
	}
	var live int
	if err := d.Pool().QueryRow(t.Context(), `SELECT count(*) FROM skiplock_jobs`).Scan(&live); err != nil || live != 20 {
		t.Fatalf("%d jobs live after the refused rebuild, %v", live, err)
	}
	if hotTableFile(t, d) != oid {
		t.Fatal("the hot table changed in a refused rebuild")
	}
}

// Statistics that count more live jobs than MaxRows while the table holds
// fewer (after a rebuild's TRUNCATE, what other sessions report late is
// counted again) do not refuse a rebuild: the jobs are counted.
func TestHotTableRebuildCountsWhenTheStatisticsSayTooMany(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	insertFast(t, d, 200, nil)
	ctx := t.Context()
	var live int64
	testwait.Until(t, 30*time.Second, "the statistics to count the 200 jobs", func() bool {
		if err := d.Pool().QueryRow(ctx, `SELECT pg_stat_get_live_tuples('skiplock_jobs'::regclass)`).Scan(&live); err != nil {
			t.Fatal(err)
		}
		return live >= 200
	})
	// A session that reported its statistics a moment ago keeps those of
	// its next transaction for a second or more: the deletes go uncounted.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM skiplock_jobs WHERE id NOT IN (SELECT id FROM skiplock_jobs ORDER BY id LIMIT 5)`); err != nil {
		t.Fatal(err)
	}
	r := rebuild(t, d, driver.RebuildLimits{Force: true, MaxRows: 100})
	if !r.Done || r.Moved != 5 {
		t.Fatalf("rebuild with 5 jobs live, 100 allowed, the statistics counting up to 200: %+v", r)
	}
}

// A rebuild waits for the table's lock a short while and gives up: the
// caller tries again later.
func TestHotTableRebuildGivesUpOnTheLock(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := context.Background()
	holder := pgtest.Conn(t, url)
	if _, err := holder.Exec(ctx, `BEGIN; LOCK TABLE skiplock_jobs IN ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var got int64
	if err := d.Pool().QueryRow(ctx, `SELECT skiplock_hot_table_rebuild(1000, 20)`).Scan(&got); err != nil || got != -1 {
		t.Fatalf("skiplock_hot_table_rebuild under a lock = %d, %v; want -1", got, err)
	}
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
}

// A view over the hot table and row security stay as they are: the
// rebuild truncates the table in place, so nothing depends on a copy.
func TestHotTableRebuildKeepsViewsAndPolicies(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	insertFast(t, d, 5, nil)
	if _, err := d.Pool().Exec(ctx, `CREATE VIEW jobs_view AS SELECT id FROM skiplock_jobs;
		ALTER TABLE skiplock_jobs ENABLE ROW LEVEL SECURITY;
		CREATE POLICY jobs_all ON skiplock_jobs USING (true)`); err != nil {
		t.Fatal(err)
	}
	file := hotTableFile(t, d)
	if r := rebuild(t, d, anySize); !r.Done || r.Moved != 5 || r.Refused != "" {
		t.Fatalf("rebuild with a view and a policy: %+v, want done with 5 jobs", r)
	}
	if hotTableFile(t, d) == file {
		t.Fatal("the hot table kept its files in a rebuild")
	}
	var viewed, policies int
	if err := d.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM jobs_view), (SELECT count(*) FROM pg_policy WHERE polrelid = 'skiplock_jobs'::regclass)`).Scan(&viewed, &policies); err != nil {
		t.Fatal(err)
	}
	if viewed != 5 || policies != 1 {
		t.Fatalf("after the rebuild: the view shows %d jobs (want 5), %d policies (want 1)", viewed, policies)
	}
}

// A replica identity and a comment on the table are carried over.
func TestHotTableRebuildKeepsReplicaIdentityAndComment(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	if _, err := d.Pool().Exec(t.Context(), `ALTER TABLE skiplock_jobs REPLICA IDENTITY FULL; COMMENT ON TABLE skiplock_jobs IS 'jobs ''live'''`); err != nil {
		t.Fatal(err)
	}
	if r := rebuild(t, d, anySize); !r.Done {
		t.Fatalf("rebuild: %+v", r)
	}
	var ident, comment string
	if err := d.Pool().QueryRow(t.Context(), `SELECT relreplident::text, obj_description(oid, 'pg_class') FROM pg_class WHERE oid = 'skiplock_jobs'::regclass`).Scan(&ident, &comment); err != nil {
		t.Fatal(err)
	}
	if ident != "f" || comment != "jobs 'live'" {
		t.Fatalf("after the rebuild: replica identity %q, comment %q", ident, comment)
	}
}

// A VACUUM that takes seconds holds a lock on the hot table all along, but
// it is no holder: it ends by itself and holds back no other vacuum, so
// nothing may be spilled or refused for it.
func TestHotTableSlowVacuumIsNoHolder(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	insertFast(t, d, 2000, nil)
	vac := pgtest.Conn(t, url)
	// The slowest vacuum there is: a pause of 100 ms after each page.
	if _, err := vac.Exec(ctx, `SET vacuum_cost_delay = '100ms'; SET vacuum_cost_limit = 1`); err != nil {
		t.Fatal(err)
	}
	var pid int32
	if err := vac.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := vac.Exec(context.WithoutCancel(ctx), `VACUUM (INDEX_CLEANUP ON) skiplock_jobs`)
		done <- err
	}()
	testwait.Until(t, 30*time.Second, "the vacuum to have run for 3 s", func() bool {
		var running bool
		err := d.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1
			AND query ILIKE 'VACUUM%' AND xact_start < now() - interval '3 seconds')`, pid).Scan(&running)
		if err != nil {
			t.Fatal(err)
		}
		return running
	})
	for range 5 {
		r := rebuild(t, d, driver.RebuildLimits{Force: true, LockWait: 10 * time.Millisecond})
		if r.HeldBy != "" {
			t.Fatalf("a VACUUM in progress named as the hot table's holder: %q", r.HeldBy)
		}
		var vacuuming bool
		if err := d.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_progress_vacuum WHERE pid = $1)`, pid).Scan(&vacuuming); err != nil {
			t.Fatal(err)
		}
		if !vacuuming {
			t.Fatal("the vacuum ended before the test could look: make it slower")
		}
	}
	if _, err := d.Pool().Exec(ctx, `SELECT pg_cancel_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	<-done
}
