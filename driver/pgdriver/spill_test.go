package pgdriver_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// longLockWait waits for the locks the tests hold only briefly.
var longLockWait = driver.SpillLimits{LockWait: 10 * time.Second}

func spill(t *testing.T, d *pgdriver.Driver, open bool, limits driver.SpillLimits) driver.Spill {
	t.Helper()
	s, err := d.HotTableSpill(t.Context(), open, limits)
	if err != nil {
		t.Fatalf("spill: %v", err)
	}
	return s
}

// holdTable opens a transaction that holds the hot table, and waits until
// the driver names it as the holder (a transaction open two seconds).
func holdTable(t *testing.T, d *pgdriver.Driver, url string) *pgx.Conn {
	t.Helper()
	holder := pgtest.HoldTable(t, url)
	testwait.Until(t, 30*time.Second, "the holder to be named", func() bool {
		return rebuild(t, d, driver.RebuildLimits{Force: true, LockWait: 10 * time.Millisecond}).HeldBy != ""
	})
	return holder
}

// smallSpills leaves a spill table for another once it takes 1 MiB.
var smallSpills = driver.SpillLimits{Bytes: 1 << 20, LockWait: 10 * time.Second}

// heldWithSpill answers a schema whose hot table a transaction holds until
// the test ends, and the spill table new jobs go to, opened with
// smallSpills and trusted by the driver.
func heldWithSpill(t *testing.T) (*pgdriver.Driver, string) {
	t.Helper()
	d, url := pgtest.Schema(t)
	holder := holdTable(t, d, url)
	t.Cleanup(func() { _, _ = holder.Exec(context.Background(), `ROLLBACK`) })
	first := spill(t, d, true, smallSpills).Opened
	pgdriver.TrustSpillTarget(d, first)
	return d, first
}

// tableOf answers the table that holds live job id ("" if none does).
func tableOf(t *testing.T, d *pgdriver.Driver, id int64) string {
	t.Helper()
	var table string
	err := d.Pool().QueryRow(t.Context(), `SELECT coalesce((SELECT tableoid::regclass::text FROM skiplock_jobs WHERE id = $1), '')`, id).Scan(&table)
	if err != nil {
		t.Fatal(err)
	}
	return table
}

// inHotTable fails t unless each job of ids is in the hot table itself.
func inHotTable(t *testing.T, d *pgdriver.Driver, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if got := tableOf(t, d, id); got != "skiplock_jobs" {
			t.Fatalf("job %d is in %q, not in the hot table", id, got)
		}
	}
}

func spillTables(t *testing.T, d *pgdriver.Driver) int {
	t.Helper()
	var n int
	err := d.Pool().QueryRow(t.Context(), `SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass)
		+ (SELECT count(*) FROM skiplock_hot_spill)`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// endHold commits the holder's transaction and waits until the spill
// tables' jobs are back in the hot table and no spill table is left.
func endHold(t *testing.T, d *pgdriver.Driver, holder *pgx.Conn, limits driver.SpillLimits) {
	t.Helper()
	if _, err := holder.Exec(t.Context(), `COMMIT`); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "the spill tables to be taken back", func() bool {
		return !spill(t, d, false, limits).Active
	})
	if n := spillTables(t, d); n != 0 {
		t.Fatalf("%d spill tables and rows left", n)
	}
}

// churn inserts 10,000 jobs and deletes them, 1,000 at a time: with a
// holder, their space stays where they went.
func churn(t *testing.T, d *pgdriver.Driver) {
	t.Helper()
	for range 10 {
		insertFast(t, d, 1000, nil)
		if _, err := d.Pool().Exec(t.Context(), `DELETE FROM skiplock_jobs WHERE state = 'pending'`); err != nil {
			t.Fatal(err)
		}
	}
}

// While a transaction holds the hot table, new plain jobs go to a spill
// table, whichever way they are inserted; claims and completions find jobs
// in both. Once the holder ends, the spill table's jobs go back to the hot
// table, as they were, and the spill table is dropped.
func TestHotTableSpillTakesNewJobsWhileTheTableIsHeld(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	_, before := insertFast(t, d, 10, nil)
	holder := holdTable(t, d, url)
	s := spill(t, d, true, longLockWait)
	if !s.Active || s.Opened == "" || s.Target != s.Opened {
		t.Fatalf("spill with a holder: %+v", s)
	}
	// The driver reads the target in the background: the first inserts
	// may still go to the hot table.
	testwait.Until(t, 30*time.Second, "a new job to go to the spill table", func() bool {
		r, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3}})
		if err != nil {
			t.Fatal(err)
		}
		return tableOf(t, d, r[0].Job.ID) == s.Opened
	})
	_, fast := insertFast(t, d, 50, nil)
	many, err := d.JobInsertMany(ctx, []*driver.InsertParams{
		{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3},
		{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3, RunAt: time.Now().Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	started, err := d.JobInsertStart(ctx, &driver.InsertParams{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3},
		driver.StartParams{WorkerID: "w", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3, IdempotencyKey: "k1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range append(fast, many[0].Job.ID, many[1].Job.ID, started.ID) {
		if got := tableOf(t, d, id); got != s.Opened {
			t.Fatalf("job %d went to %q, want the spill table %s", id, got, s.Opened)
		}
	}
	// A job with a key stays in the hot table, whose index keeps keys unique.
	if got := tableOf(t, d, keyed[0].Job.ID); got != "skiplock_jobs" {
		t.Fatalf("the keyed job went to %q", got)
	}
	if again, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3, IdempotencyKey: "k1"}}); err != nil || !again[0].Duplicate {
		t.Fatalf("the same key again: %+v, %v", again, err)
	}
	// Claims take from both tables, in claim order: the hot table's jobs
	// are older.
	jobs, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 5, DefaultLease: time.Minute})
	if err != nil || len(jobs) != 5 {
		t.Fatalf("claim: %d jobs, %v", len(jobs), err)
	}
	for i, j := range jobs {
		if j.ID != before[i] {
			t.Fatalf("claim %d took job %d, want %d", i, j.ID, before[i])
		}
	}
	jobs, err = d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 1000, DefaultLease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if _, err := d.JobComplete(ctx, driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: "w"}}); err != nil {
			t.Fatalf("complete job %d: %v", j.ID, err)
		}
	}
	var live int
	if err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM skiplock_jobs`).Scan(&live); err != nil {
		t.Fatal(err)
	}
	// Left: the first claim's five, the scheduled job, the started one.
	if live != 7 {
		t.Fatalf("%d jobs live after the completions, want 7", live)
	}
	endHold(t, d, holder, longLockWait)
	inHotTable(t, d, many[1].Job.ID, started.ID, before[0])
	// The started job's worker still finds it by id.
	if _, err := d.JobComplete(ctx, driver.CompleteParams{HeldJob: driver.HeldJob{ID: started.ID, Attempt: started.Attempt, WorkerID: "w"}}); err != nil {
		t.Fatalf("complete the started job after the move: %v", err)
	}
	r, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3}})
	if err != nil {
		t.Fatalf("insert after the spill table went: %v", err)
	}
	if got := tableOf(t, d, r[0].Job.ID); got != "skiplock_jobs" {
		t.Fatalf("a new job went to %q", got)
	}
	// And the hot table can be rebuilt again.
	if r := rebuild(t, d, anySize); !r.Done {
		t.Fatalf("rebuild after the spill: %+v", r)
	}
}

// A spill table whose jobs have drained is left for another, then emptied
// (its live jobs moved to the target) and used again; the hot table and its
// spill tables stay bounded whatever the holder keeps.
func TestHotTableSpillEmptiesADrainedSpillTable(t *testing.T) {
	t.Parallel()
	limits := smallSpills
	d, first := heldWithSpill(t)
	ctx := t.Context()
	_, later := insertFast(t, d, 1, func(_ int, p *driver.InsertParams) { p.RunAt = time.Now().Add(time.Hour) })
	// Churn in the spill table: the holder keeps every finished row's space.
	churn(t, d)
	var second string
	testwait.Until(t, 30*time.Second, "new jobs to move on from the drained spill table", func() bool {
		s := spill(t, d, false, limits)
		second = s.Target
		return second != first && second != ""
	})
	testwait.Until(t, 30*time.Second, "the drained spill table to be emptied", func() bool {
		return spill(t, d, false, limits).Emptied == first
	})
	if got := tableOf(t, d, later[0]); got != second {
		t.Fatalf("the scheduled job is in %q after its spill table was emptied, want %s", got, second)
	}
	var size int64
	if err := d.Pool().QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, first).Scan(&size); err != nil {
		t.Fatal(err)
	}
	if size >= 2<<20 {
		t.Fatalf("the emptied spill table takes %d bytes", size)
	}
	// The emptied one takes new jobs again once the second has drained.
	pgdriver.TrustSpillTarget(d, second)
	churn(t, d)
	testwait.Until(t, 30*time.Second, "new jobs to go back to the emptied spill table", func() bool {
		return spill(t, d, false, limits).Target == first
	})
	if n := spillTables(t, d); n != 4 { // two tables, two rows
		t.Fatalf("%d spill tables and rows, want 2 of each", n)
	}
}

// A spill table full of jobs is left for another once it takes
// limits.Bytes, so that a backlog does not keep one table growing with
// every row finished beside it; it is kept while its jobs are there, and
// emptied at the first count after they are gone, whatever the statistics
// still count.
func TestHotTableSpillMovesOnFromAFullSpillTable(t *testing.T) {
	t.Parallel()
	limits := smallSpills
	d, first := heldWithSpill(t)
	ctx := t.Context()
	_, ids := insertFast(t, d, 5000, nil)
	s := spill(t, d, false, limits)
	if s.Target == first || s.Target == "" {
		t.Fatalf("a spill table of 5,000 pending jobs and %d bytes is still the target: %+v", s.Bytes, s)
	}
	if s := spill(t, d, false, limits); s.Emptied != "" {
		t.Fatalf("a spill table with its jobs was emptied: %+v", s)
	}
	if got := tableOf(t, d, ids[len(ids)-1]); got != first {
		t.Fatalf("a job of the full spill table is in %q", got)
	}
	if _, err := d.Pool().Exec(ctx, `DELETE FROM skiplock_jobs WHERE id = ANY($1)`, ids); err != nil {
		t.Fatal(err)
	}
	// A table found full is counted again a second later, not at every
	// look: this look counts it at once.
	pgdriver.LookAgainAtSpills(d)
	if s := spill(t, d, false, limits); s.Emptied != first || s.Moved != 0 {
		t.Fatalf("the look after its jobs finished: %+v, want %s emptied", s, first)
	}
}

// A driver that still trusts a spill table dropped since puts its jobs in
// the hot table instead.
func TestInsertOutlivesADroppedSpillTable(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	pgdriver.TrustSpillTarget(d, "skiplock_jobs_spill_404")
	r, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3}})
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	pgdriver.TrustSpillTarget(d, "skiplock_jobs_spill_404")
	_, ids := insertFast(t, d, 3, nil)
	pgdriver.TrustSpillTarget(d, "skiplock_jobs_spill_404")
	started, err := d.JobInsertStart(ctx, &driver.InsertParams{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3},
		driver.StartParams{WorkerID: "w", Lease: time.Minute})
	if err != nil {
		t.Fatalf("insert and start: %v", err)
	}
	inHotTable(t, d, append(ids, r[0].Job.ID, started.ID)...)
}

// A spill table has what makes the hot table what it is, but its name:
// columns and defaults, constraints, indexes, triggers (flow control's,
// made as a flow claim makes them), storage parameters, grants and replica
// identity.
func TestHotTableSpillHasTheHotTablesShape(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	if _, err := d.Pool().Exec(ctx, `SELECT skiplock_flow_triggers_make(); GRANT SELECT ON skiplock_jobs TO PUBLIC;
		ALTER TABLE skiplock_jobs REPLICA IDENTITY FULL; ALTER TABLE skiplock_jobs SET (fillfactor = 90)`); err != nil {
		t.Fatal(err)
	}
	name := spill(t, d, true, longLockWait).Opened
	shape := func(table string) map[string]string {
		queries := map[string]string{
			"indexes": `SELECT string_agg(def, E'\n' ORDER BY def) FROM (SELECT regexp_replace(pg_get_indexdef(indexrelid), '^.* USING ', '') AS def
				FROM pg_index WHERE indrelid = $1::regclass) i`,
			"constraints": `SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), E'\n' ORDER BY conname)
				FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`,
			"triggers": `SELECT string_agg(tgname || ' ' || regexp_replace(pg_get_triggerdef(oid), ' ON \S+ ', ' '), E'\n' ORDER BY tgname)
				FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal`,
			"options": `SELECT coalesce(array_to_string(reloptions, ','), '') || relreplident::text FROM pg_class WHERE oid = $1::regclass`,
			"grants":  `SELECT coalesce(array_to_string(relacl, ','), '') FROM pg_class WHERE oid = $1::regclass`,
			"columns": `SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod) || ' ' || attnotnull || ' ' ||
				coalesce(pg_get_expr(d.adbin, d.adrelid), ''), E'\n' ORDER BY attnum)
				FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
				WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
		}
		out := map[string]string{}
		for k, q := range queries {
			var v string
			if err := d.Pool().QueryRow(ctx, q, table).Scan(&v); err != nil {
				t.Fatalf("%s of %s: %v", k, table, err)
			}
			out[k] = v
		}
		return out
	}
	want, got := shape("skiplock_jobs"), shape(name)
	for k := range want {
		if want[k] != got[k] {
			t.Errorf("%s of the spill table:\n%s\nwant the hot table's:\n%s", k, got[k], want[k])
		}
	}
}

// A holder that reads the hot table again once spill tables exist holds
// them too: the one it holds is not emptied (nor waited for on every look),
// new jobs move on to another, and both go once it ends.
func TestHotTableSpillLeavesATableItsHolderRead(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	holder := holdTable(t, d, url)
	limits := driver.SpillLimits{Bytes: 1 << 20, LockWait: 10 * time.Millisecond}
	first := spill(t, d, true, limits).Opened
	pgdriver.TrustSpillTarget(d, first)
	churn(t, d)
	if _, err := holder.Exec(ctx, `SELECT count(*) FROM skiplock_jobs`); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "new jobs to move on from the held spill table", func() bool {
		s := spill(t, d, false, limits)
		return s.Target != first && s.Target != ""
	})
	for range 20 {
		if s := spill(t, d, false, limits); s.Emptied == first {
			t.Fatalf("emptied %s under its holder's lock", first)
		}
	}
	endHold(t, d, holder, limits)
}

// A schema not yet migrated to spill tables: the leader's look finds none,
// without an error, and inserts go to the hot table.
func TestHotTableSpillBeforeItsMigration(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	if _, err := d.Pool().Exec(ctx, `DROP TABLE skiplock_hot_spill`); err != nil {
		t.Fatal(err)
	}
	if s, err := d.HotTableSpill(ctx, false, driver.SpillLimits{}); err != nil || s.Active {
		t.Fatalf("spill look before the migration: %+v, %v", s, err)
	}
	_, ids := insertFast(t, d, 1, nil)
	if got := tableOf(t, d, ids[0]); got != "skiplock_jobs" {
		t.Fatalf("the job went to %q", got)
	}
}

// sqlEnqueue calls skiplock_enqueue on the driver's pool and answers the
// job's id.
func sqlEnqueue(t *testing.T, d *pgdriver.Driver, opts string) int64 {
	t.Helper()
	var id int64
	err := d.Pool().QueryRow(t.Context(), `SELECT id FROM skiplock_enqueue('k', '{"a": 1}', $1::jsonb)`, opts).Scan(&id)
	if err != nil {
		t.Fatalf("skiplock_enqueue(%s): %v", opts, err)
	}
	return id
}

// jobRow answers job id's row as JSON, without its id and times.
func jobRow(t *testing.T, d *pgdriver.Driver, id int64) string {
	t.Helper()
	var row string
	err := d.Pool().QueryRow(t.Context(), `SELECT (to_jsonb(j) - 'id' - 'created_at' - 'run_at' - 'updated_at')::text
		FROM skiplock_jobs j WHERE id = $1`, id).Scan(&row)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// skiplock_enqueue() in SQL sends a plain job where the library does: to
// the spill target while the hot table is held, stored as it would be in
// the hot table; a job with a key stays in the hot table.
func TestSQLEnqueueGoesToTheSpillTarget(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	const opts = `{"queue": "q", "tenant": "t", "op": "o", "priority": 7, "max_retries": 9, "tags": ["x"],
		"metadata": {"m": 1}, "workflow_id": "w", "stage": "s"}`
	hot := sqlEnqueue(t, d, opts)
	holder := holdTable(t, d, url)
	first := spill(t, d, true, longLockWait).Opened
	spilled := sqlEnqueue(t, d, opts)
	if got := tableOf(t, d, spilled); got != first {
		t.Fatalf("the SQL job went to %q, want the spill table %s", got, first)
	}
	if a, b := jobRow(t, d, hot), jobRow(t, d, spilled); a != b {
		t.Fatalf("the spilled job is stored as\n%s\nthe hot table's as\n%s", b, a)
	}
	later := sqlEnqueue(t, d, `{"delay_seconds": 3600}`)
	if got, row := tableOf(t, d, later), jobRow(t, d, later); got != first || !strings.Contains(row, `"state": "scheduled"`) {
		t.Fatalf("the delayed job is in %q as %s", got, row)
	}
	keyed := sqlEnqueue(t, d, `{"idempotency_key": "k1"}`)
	if got := tableOf(t, d, keyed); got != "skiplock_jobs" {
		t.Fatalf("the keyed job went to %q", got)
	}
	var again int64
	var dup bool
	err := d.Pool().QueryRow(t.Context(), `SELECT id, duplicate FROM skiplock_enqueue('k', '{}', '{"idempotency_key": "k1"}')`).Scan(&again, &dup)
	if err != nil || again != keyed || !dup {
		t.Fatalf("the same key again: %d %v %v; want %d, a duplicate", again, dup, err, keyed)
	}
	// A repeatable read transaction whose snapshot still sees the spill
	// target after it has gone stores its job in the hot table.
	ctx := t.Context()
	stale := pgtest.Conn(t, url)
	if _, err := stale.Exec(ctx, `BEGIN ISOLATION LEVEL REPEATABLE READ`); err != nil {
		t.Fatal(err)
	}
	var seen string
	if err := stale.QueryRow(ctx, `SELECT name FROM skiplock_hot_spill WHERE target`).Scan(&seen); err != nil || seen != first {
		t.Fatalf("the snapshot's target: %q, %v", seen, err)
	}
	endHold(t, d, holder, longLockWait)
	var late int64
	if err := stale.QueryRow(ctx, `SELECT id FROM skiplock_enqueue('k')`).Scan(&late); err != nil {
		t.Fatalf("enqueue on a snapshot from before the spill table went: %v", err)
	}
	if _, err := stale.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	inHotTable(t, d, spilled, later, late)
}

// Migration 026 changes skiplock_enqueue in place, and going down gives
// back the function migration 018 made.
func TestSQLEnqueueSpillMigrationGoesDown(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	source := func() string {
		var src string
		if err := d.Pool().QueryRow(ctx, `SELECT prosrc FROM pg_proc WHERE oid = 'skiplock_enqueue(text, jsonb, jsonb)'::regprocedure`).Scan(&src); err != nil {
			t.Fatal(err)
		}
		return src
	}
	up := source()
	if !strings.Contains(up, "skiplock_enqueue_spill(") {
		t.Fatalf("skiplock_enqueue does not call skiplock_enqueue_spill:\n%s", up)
	}
	// Down to the step before it, through any step made after it.
	status, err := d.Migrator().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, m := range status {
		if m.Version >= 26 && m.Applied != nil {
			steps++
		}
	}
	done, err := d.Migrator().Down(ctx, steps)
	if err != nil || len(done) != steps || done[len(done)-1].Name != "sql_enqueue_spill" {
		t.Fatalf("down: %+v, %v", done, err)
	}
	// Down gives back the function migration 018 made, to the byte.
	file, err := os.ReadFile("migrations/018_sql_enqueue.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	made := string(file)
	made = made[strings.Index(made, "CREATE FUNCTION skiplock_enqueue("):]
	made = made[strings.Index(made, "$$")+2:]
	made = made[:strings.Index(made, "$$")]
	if down := source(); down != made {
		t.Fatalf("down left skiplock_enqueue as\n%s\nwant, as migration 018 made it,\n%s", down, made)
	}
	if _, err := d.Migrator().Up(ctx, 0); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if again := source(); again != up {
		t.Fatalf("up again made skiplock_enqueue\n%s", again)
	}
}

// TestHotTableUpkeepIsTheDrivers: the hot table's upkeep keeps its state on
// the driver; an executor of a transaction, the driver's own or a caller's,
// has no upkeep to call (driver.As answers ErrUnsupported), so none runs
// without that state.
func TestHotTableUpkeepIsTheDrivers(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	if !driver.Supports[driver.HotTableStore](d) {
		t.Fatal("the driver has no hot-table upkeep")
	}
	tx, err := d.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	pgxTx, err := d.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pgxTx.Rollback(context.Background()) }()
	callers, err := d.UnwrapTx(pgxTx)
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]driver.Executor{"Begin": tx, "UnwrapTx": callers} {
		if _, err := driver.As[driver.HotTableStore](e); !errors.Is(err, driver.ErrUnsupported) {
			t.Errorf("%s: the transaction's executor as a HotTableStore: %v, want ErrUnsupported", name, err)
		}
	}
}

// Two upkeeps that take back the same spill table: the one that waited for
// its lock while the other dropped it finds it gone, and that is no error
// (the other side here is a transaction that drops it as the upkeep does).
func TestHotTableSpillTakenBackTwiceIsNoError(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	holder := holdTable(t, d, url)
	name := spill(t, d, true, smallSpills).Opened
	if _, err := holder.Exec(t.Context(), `COMMIT`); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	if _, err := other.Exec(t.Context(), `UPDATE skiplock_hot_spill SET target = false`); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `LOCK TABLE ONLY `+pgx.Identifier{name}.Sanitize()+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := pgdriver.EmptySpill(context.Background(), d, name, true, 10*time.Second)
		done <- err
	}()
	testwait.Until(t, 30*time.Second, "the upkeep to wait for the spill table's lock", func() bool {
		var waiting bool
		if err := d.Pool().QueryRow(t.Context(), `SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND relation = $1::regclass)`, name).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting
	})
	if _, err := tx.Exec(t.Context(), `DROP TABLE `+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `DELETE FROM skiplock_hot_spill WHERE name = $1`, name); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the upkeep that found its spill table dropped: %v", err)
	}
	if s := spill(t, d, false, longLockWait); s.Active {
		t.Fatalf("spill tables left: %+v", s)
	}
}
