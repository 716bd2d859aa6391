package pgdriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgrole"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// A schema that has never had a flow key has no flow triggers, so that no
// claim or completion pays for them. The first flow claim makes them, on
// the hot table and its spill tables; the slot it takes is freed when its
// job completes, in a spill table, and the next job of the key starts.
func TestFlowTriggersMadeByTheFirstFlowClaim(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	spilled := spill(t, d, true, longLockWait).Opened
	pgdriver.TrustSpillTarget(d, spilled)
	wantFlowTriggers(t, d, 0, "on a new schema, want none")
	insertKeyed(t, d, 2)
	wantFlowTriggers(t, d, 0, "after an insert, want none before a flow claim")
	got := flowClaim(t, d, 1) // the key's one slot
	wantFlowTriggers(t, d, 4, "after a flow claim, want 2 on the hot table and 2 on %s", spilled)
	if _, err := d.JobCompleteMany(ctx, []driver.CompleteParams{{HeldJob: driver.HeldJob{ID: got[0].ID,
		Attempt: got[0].Attempt, WorkerID: got[0].WorkerID}}}); err != nil {
		t.Fatal(err)
	}
	if next := flowClaim(t, d, 1); next[0].ID == got[0].ID {
		t.Fatalf("claimed job %d again", next[0].ID)
	}
}

// A flow claim in a caller's transaction that rolls back leaves the
// triggers made: they are made in a transaction of their own, never in the
// caller's, and the driver notes them made.
func TestFlowTriggersOutliveACallersRollback(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	tx, inTx := driverTx(t, d)
	if _, err := inTx.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 10,
		DefaultLease: time.Minute, Flow: true}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wantFlowTriggers(t, d, 2, "after the caller's rollback, want 2")
}

// A role that may write the jobs but does not own their table (as an
// application's role often is) makes the triggers too: the maker runs as
// the schema's owner.
func TestFlowTriggersMadeByARoleThatDoesNotOwnTheTable(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	var schema string
	if err := d.Pool().QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	role, sch := pgx.Identifier{schema + "_app"}.Sanitize(), pgx.Identifier{schema}.Sanitize()
	if _, err := d.Pool().Exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Skipf("cannot make a role: %v", err)
	}
	t.Cleanup(func() {
		_, _ = d.Pool().Exec(context.Background(), "DROP OWNED BY "+role+"; DROP ROLE "+role)
	})
	if _, err := d.Pool().Exec(ctx, "GRANT USAGE ON SCHEMA "+sch+" TO "+role+
		"; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "+sch+" TO "+role+
		"; GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA "+sch+" TO "+role); err != nil {
		t.Fatal(err)
	}
	appURL, err := pgrole.WithUser(url, schema+"_app")
	if err != nil {
		t.Fatal(err)
	}
	app, err := pgdriver.Connect(ctx, appURL)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	insertKeyed(t, app, 1)
	flowClaim(t, app, 1)
	wantFlowTriggers(t, d, 2, "want 2")
}

// While a transaction that has written to the jobs' table holds it, making
// the flow triggers waits for it no longer than its lock wait, and the
// flow claim fails; so do the process's flow claims right after, without
// another wait on the table. Once the transaction has ended, a later try
// makes them.
func TestFlowTriggersNotMadeBehindAWriter(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	tx := connTx(t, url)
	if _, err := tx.Exec(ctx, `UPDATE skiplock_jobs SET kind = kind`); err != nil {
		t.Fatal(err)
	}
	claim := func() error {
		_, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 10,
			DefaultLease: time.Minute, Flow: true})
		return err
	}
	if err := claim(); err == nil || !strings.Contains(err.Error(), "lock timeout") {
		t.Fatalf("flow claim beside a writer: %v, want the lock not had", err)
	}
	if err := claim(); err == nil || !strings.Contains(err.Error(), "the last try failed") {
		t.Fatalf("flow claim right after: %v, want no try", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "a flow claim once the writer has ended", func() bool { return claim() == nil })
	wantFlowTriggers(t, d, 2, "want 2")
}

// A slot taken with no trigger to free it (by a process from before
// migration 036) is freed when the triggers are made: its job is not
// running, and the first flow claim takes the slot.
func TestFlowTriggersFreeSlotsTakenWithout(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	insertKeyed(t, d, 1)
	// As a claim would have, for a job since finished.
	if _, err := d.Pool().Exec(ctx, `UPDATE skiplock_flow_slots SET job_id = 999999, taken_at = now()`); err != nil {
		t.Fatal(err)
	}
	flowClaim(t, d, 1)
}

// A spill table is opened under the flow triggers' lock: while their maker
// holds it, the table waits, and once the maker has made them it copies
// them from the hot table. (Opened between the maker's look at the spill
// tables and its triggers' commit, a table would have had none.)
func TestSpillTableOpensAfterTheFlowTriggersAreMade(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	tx := connTx(t, url)
	if _, err := tx.Exec(ctx, pgdriver.FlowTriggersLock); err != nil {
		t.Fatal(err)
	}
	waiting, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if s, err := d.HotTableSpill(waiting, true, longLockWait); err == nil {
		t.Fatalf("opened %+v while the flow triggers' lock was held", s)
	}
	opened := make(chan driver.Spill, 1)
	go func() {
		s, err := d.HotTableSpill(ctx, true, longLockWait)
		if err != nil {
			t.Errorf("spill: %v", err)
		}
		opened <- s
	}()
	if _, err := tx.Exec(ctx, `SELECT skiplock_flow_triggers_make()`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if s := <-opened; s.Opened == "" {
		t.Fatalf("spill: %+v, want a table opened", s)
	}
	wantFlowTriggers(t, d, 4, "want 2 on the hot table and 2 on the spill table")
}

// Migration 036 keeps the flow triggers of a schema whose flow keys have
// slots, and going down makes them again where it took them.
func TestFlowTriggersMigration(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	if done, err := d.Migrator().Down(ctx, 1); err != nil || done[0].Name != "flow_triggers_on_use" {
		t.Fatalf("down: %+v, %v", done, err)
	}
	wantFlowTriggers(t, d, 2, "before migration 036, want 2")
	insertKeyed(t, d, 1)
	if _, err := d.Migrator().Up(ctx, 0); err != nil {
		t.Fatal(err)
	}
	wantFlowTriggers(t, d, 2, "after migration 036 with a key's slots, want 2 kept")
}

// wantFlowTriggers fails the test unless the hot table and its spill tables
// have want flow triggers; what the message says after the count, formatted
// with args.
func wantFlowTriggers(t *testing.T, d *pgdriver.Driver, want int, what string, args ...any) {
	t.Helper()
	var n int
	if err := d.Pool().QueryRow(t.Context(), `SELECT count(*) FROM pg_trigger
		WHERE tgname IN ('skiplock_flow_release_update', 'skiplock_flow_release_delete')
		  AND (tgrelid = 'skiplock_jobs'::regclass
		       OR tgrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass))`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("%d flow triggers "+what, append([]any{n}, args...)...)
	}
}

// insertKeyed inserts n jobs of one concurrency key allowed one running job.
func insertKeyed(t *testing.T, d *pgdriver.Driver, n int) {
	t.Helper()
	jobs := make([]*driver.InsertParams, n)
	for i := range jobs {
		jobs[i] = &driver.InsertParams{Kind: "k", Queue: "default", Priority: 5, MaxRetries: 3,
			Flow: &driver.FlowKeys{ConcurrencyKey: driver.FlowKey("one", "a"), ConcurrencyLimit: 1}}
	}
	if _, err := d.JobInsertMany(t.Context(), jobs); err != nil {
		t.Fatal(err)
	}
}

// connTx begins a transaction on a connection of its own, rolled back at
// the test's end unless committed.
func connTx(t *testing.T, url string) pgx.Tx {
	t.Helper()
	tx, err := pgtest.Conn(t, url).Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx
}
