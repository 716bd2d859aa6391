package skiplock_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// welcomeEmail is the job of docs/sql.md's trigger example.
type welcomeEmail struct {
	SignupID int64  `json:"signup_id"`
	Email    string `json:"email"`
}

func (welcomeEmail) Kind() string { return "welcome_email" }

// sqlBlocks answers the ```sql blocks of a Markdown file, in order.
func sqlBlocks(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for line := range strings.Lines(string(data)) {
		switch trimmed := strings.TrimSpace(line); {
		case cur == nil && trimmed == "```sql":
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return blocks
}

// enqueueSQL calls skiplock_enqueue on conn.
func enqueueSQL(ctx context.Context, conn interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, kind, payload, opts string) (id int64, duplicate bool, err error) {
	err = conn.QueryRow(ctx, `SELECT id, duplicate FROM skiplock_enqueue($1, $2::jsonb, $3::jsonb)`,
		kind, payload, opts).Scan(&id, &duplicate)
	return id, duplicate, err
}

// TestSQLEnqueueDocExampleRuns: every ```sql block of docs/sql.md runs, in
// order, in a schema of its own; the trigger's job reaches a worker woken by
// the NOTIFY at commit, not by its poll (an hour away).
func TestSQLEnqueueDocExampleRuns(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := t.Context()
	got := make(chan welcomeEmail, 4)
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[welcomeEmail](func(_ context.Context, j *skiplock.Job[welcomeEmail]) error {
		got <- j.Args
		return nil
	}))
	client, err := skiplock.NewClient(drv, &skiplock.Config{Workers: workers,
		Queues:            map[string]skiplock.QueueConfig{"mail": {MaxWorkers: 2}},
		FetchPollInterval: time.Hour, SchedulerInterval: time.Hour, RescueInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Stop(context.Background()) })

	conn := pgtest.Conn(t, url)
	blocks := sqlBlocks(t, "docs/sql.md")
	if len(blocks) < 3 {
		t.Fatalf("docs/sql.md has %d sql blocks, want the trigger, its insert and the call", len(blocks))
	}
	for i, b := range blocks {
		if _, err := conn.Exec(ctx, b); err != nil {
			t.Fatalf("sql block %d of docs/sql.md:\n%s\n%v", i+1, b, err)
		}
	}
	want := welcomeEmail{SignupID: 1, Email: "ada@example.com"}
	if j := <-got; j != want {
		t.Fatalf("worker got %+v, want %+v", j, want)
	}
	// The first job may have been found by the claim a listener makes when it
	// starts; the second can be found only by the wake-up of its insert.
	if _, err := conn.Exec(ctx, `INSERT INTO signups (email) VALUES ('bob@example.com')`); err != nil {
		t.Fatal(err)
	}
	select {
	case j := <-got:
		if j.Email != "bob@example.com" {
			t.Fatalf("worker got %+v", j)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the job enqueued by the trigger was not claimed: no wake-up reached the worker")
	}
}

// TestSQLEnqueueDefaultsAreTheLibrarys: a job enqueued from SQL gets the
// values one inserted by the library gets, with no contracts and under a
// stored contract set (kind defaults, set defaults, derived keys).
func TestSQLEnqueueDefaultsAreTheLibrarys(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	ctx := t.Context()
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := drv.Pool()
	same := func(t *testing.T, kind, payload string, opts skiplock.InsertOpts, sqlOpts string) {
		t.Helper()
		lib, err := client.Insert(ctx, skiplock.RawArgs{KindName: kind, Payload: json.RawMessage(payload)}, &opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.JobCancel(ctx, lib.Job.ID); err != nil { // frees its key for the SQL job
			t.Fatal(err)
		}
		id, dup, err := enqueueSQL(ctx, pool, kind, payload, sqlOpts)
		if err != nil || dup {
			t.Fatalf("skiplock_enqueue: id %d, duplicate %v, %v", id, dup, err)
		}
		sql, err := client.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		a, b := *lib.Job, *sql
		for _, j := range []*skiplock.JobRow{&a, &b} {
			j.ID, j.RunAt, j.CreatedAt, j.UpdatedAt, j.FinishedAt, j.Errors = 0, time.Time{}, time.Time{}, time.Time{}, nil, nil
		}
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		if string(aj) != string(bj) {
			t.Errorf("kind %s:\nlibrary %s\nsql     %s", kind, aj, bj)
		}
	}
	same(t, "plain", `{"n": 1}`, skiplock.InsertOpts{}, `{}`)
	same(t, "plain", `{}`, skiplock.InsertOpts{Queue: "q", Priority: skiplock.Int(9), MaxRetries: skiplock.Int(0),
		Tenant: "acme", Tags: []string{"a", "b"}, Metadata: json.RawMessage(`{"m": 1}`), IdempotencyKey: "k",
		WorkflowID: "w", Stage: "s"},
		`{"queue": "q", "priority": 9, "max_retries": 0, "tenant": "acme", "tags": ["a", "b"], "metadata": {"m": 1},
		  "idempotency_key": "k", "workflow_id": "w", "stage": "s"}`)

	set, err := contract.Parse([]byte(`version: 1
defaults: {queue: bulk, priority: 2, max_retries: 7}
kinds:
  file:
    queue: ingest
    priority: 6
    ops: [ingest, delete]
    unique:
      policy: active
      scope: [payload.collection, tenant, op]
      fields: [payload.file_path, payload.size, payload.meta.ok, payload.list.1, queue]
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ContractsApply(ctx, set); err != nil {
		t.Fatal(err)
	}
	same(t, "undeclared", `{}`, skiplock.InsertOpts{}, `{}`)
	same(t, "file", `{"collection": "docs", "file_path": "/a/ü.go", "size": 1.5, "meta": {"ok": true}, "list": [0, "x"]}`,
		skiplock.InsertOpts{Op: "ingest", Tenant: "t1"}, `{"op": "ingest", "tenant": "t1"}`)
}

// TestSQLEnqueueIdempotencyKey: a second enqueue with the key of a job that
// holds it answers that job, whether the library or SQL inserted it; under
// policy window a finished job keeps its key.
func TestSQLEnqueueIdempotencyKey(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	ctx := t.Context()
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := drv.Pool()
	first, dup, err := enqueueSQL(ctx, pool, "sync", `{}`, `{"idempotency_key": "user:7"}`)
	if err != nil || dup {
		t.Fatalf("first: %v %v", dup, err)
	}
	again, dup, err := enqueueSQL(ctx, pool, "sync", `{"other": 1}`, `{"idempotency_key": "user:7"}`)
	if err != nil || !dup || again != first {
		t.Fatalf("second: id %d (want %d), duplicate %v, %v", again, first, dup, err)
	}
	lib, err := client.Insert(ctx, skiplock.RawArgs{KindName: "sync"}, &skiplock.InsertOpts{IdempotencyKey: "user:7"})
	if err != nil || !lib.Duplicate || lib.Job.ID != first {
		t.Fatalf("library insert after SQL: %+v, %v", lib, err)
	}
	lib, err = client.Insert(ctx, skiplock.RawArgs{KindName: "sync"}, &skiplock.InsertOpts{IdempotencyKey: "user:8"})
	if err != nil {
		t.Fatal(err)
	}
	if id, dup, err := enqueueSQL(ctx, pool, "sync", `{}`, `{"idempotency_key": "user:8"}`); err != nil || !dup || id != lib.Job.ID {
		t.Fatalf("SQL after library insert: id %d (want %d), duplicate %v, %v", id, lib.Job.ID, dup, err)
	}
	// Another tenant has keys of its own.
	if _, dup, err := enqueueSQL(ctx, pool, "sync", `{}`, `{"idempotency_key": "user:7", "tenant": "b"}`); err != nil || dup {
		t.Fatalf("other tenant: duplicate %v, %v", dup, err)
	}
	// A finished job frees an active key, not a window one.
	if _, err := client.JobCancel(ctx, first); err != nil {
		t.Fatal(err)
	}
	if id, dup, err := enqueueSQL(ctx, pool, "sync", `{}`, `{"idempotency_key": "user:7"}`); err != nil || dup || id == first {
		t.Fatalf("after the holder finished: id %d, duplicate %v, %v", id, dup, err)
	}
	set, err := contract.Parse([]byte("version: 1\nkinds:\n  daily: {unique: {policy: window, window: 24h, fields: [payload.day]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ContractsApply(ctx, set); err != nil {
		t.Fatal(err)
	}
	day, dup, err := enqueueSQL(ctx, pool, "daily", `{"day": "2026-11-25"}`, `{}`)
	if err != nil || dup {
		t.Fatalf("window: %v %v", dup, err)
	}
	if _, err := client.JobCancel(ctx, day); err != nil {
		t.Fatal(err)
	}
	if id, dup, err := enqueueSQL(ctx, pool, "daily", `{"day": "2026-11-25"}`, `{}`); err != nil || !dup || id != day {
		t.Fatalf("window after the holder finished: id %d (want %d), duplicate %v, %v", id, day, dup, err)
	}
	lib, err = client.Insert(ctx, skiplock.RawArgs{KindName: "daily", Payload: json.RawMessage(`{"day": "2026-11-25"}`)}, nil)
	if err != nil || !lib.Duplicate || lib.Job.ID != day {
		t.Fatalf("library insert in the window: %+v, %v", lib, err)
	}
}

// refusal asserts err is skiplock_enqueue's refusal of field.
func refusal(t *testing.T, err error, field, message string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("want a refusal of %s, got %v", field, err)
	}
	if pe.Code != "22023" || pe.ColumnName != field || !strings.HasPrefix(pe.Message, field+": ") ||
		!strings.Contains(pe.Message, message) {
		t.Fatalf("want SQLSTATE 22023 naming %s with %q, got %s (column %q): %s", field, message, pe.Code, pe.ColumnName, pe.Message)
	}
}

// countJobs answers how many jobs the schema holds, live or finished.
func countJobs(t *testing.T, drv *pgdriver.Driver) int {
	t.Helper()
	var n int
	err := drv.Pool().QueryRow(t.Context(),
		`SELECT (SELECT count(*) FROM skiplock_jobs) + (SELECT count(*) FROM skiplock_jobs_archive)`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSQLEnqueueRefusesBadFields: a bad field raises an error naming it,
// from a trigger too, whose row is not stored either; nothing is stored.
func TestSQLEnqueueRefusesBadFields(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := t.Context()
	conn := pgtest.Conn(t, url)
	_, err := conn.Exec(ctx, `
CREATE TABLE requests (kind text, payload jsonb, opts jsonb);
CREATE FUNCTION requests_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM skiplock_enqueue(NEW.kind, NEW.payload, NEW.opts);
    RETURN NEW;
END $$;
CREATE TRIGGER requests_enqueue AFTER INSERT ON requests FOR EACH ROW EXECUTE FUNCTION requests_enqueue();`)
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`{"a":`, 201) + "1" + strings.Repeat("}", 201)
	for _, c := range []struct{ kind, payload, opts, field, message string }{
		{"", `{}`, `{}`, "kind", "is required"},
		{strings.Repeat("k", 201), `{}`, `{}`, "kind", "must be at most 200 bytes, got 201"},
		{"k", `[1]`, `{}`, "payload", "must be a JSON object"},
		{"k", deep, `{}`, "payload", "is nested deeper than 200 levels"},
		{"k", `{"n": 1e301}`, `{}`, "payload", "is out of range"},
		{"k", `{}`, `[]`, "opts", "must be a JSON object"},
		{"k", `{}`, `{"pirority": 1}`, "pirority", "is not an option of skiplock_enqueue (options: op, queue"},
		{"k", `{}`, `{"depends_on": [1]}`, "depends_on", "is not an option"},
		{"k", `{}`, `{"priority": 11}`, "priority", "must be between 0 and 10, got 11"},
		{"k", `{}`, `{"priority": "high"}`, "priority", `must be an integer, got JSON "high"`},
		{"k", `{}`, `{"priority": 1.5}`, "priority", "must be an integer"},
		{"k", `{}`, `{"max_retries": -1}`, "max_retries", "must be between 0 and 1000000, got -1"},
		{"k", `{}`, `{"queue": 7}`, "queue", "must be a string, got JSON number"},
		{"k", `{}`, `{"queue": "` + strings.Repeat("q", 201) + `"}`, "queue", "must be at most 200 bytes"},
		{"k", `{}`, `{"idempotency_key": "` + strings.Repeat("i", 501) + `"}`, "idempotency_key", "must be at most 500 bytes"},
		{"k", `{}`, `{"run_at": "tomorrow"}`, "run_at", `must be an RFC 3339 timestamp from 1970 to 9999 in UTC, got "tomorrow"`},
		{"k", `{}`, `{"run_at": "1969-12-31T23:59:59Z"}`, "run_at", "must be from 1970-01-01T00:00:00Z"},
		{"k", `{}`, `{"run_at": "2030-01-01T00:00:00Z", "delay_seconds": 5}`, "delay_seconds", "set run_at or delay_seconds, not both"},
		{"k", `{}`, `{"delay_seconds": -1}`, "delay_seconds", "must be between 0 and 316224000 seconds (3660 days), got -1"},
		{"k", `{}`, `{"tags": "a"}`, "tags", "must be an array of strings, got JSON string"},
		{"k", `{}`, `{"tags": ["a", 2]}`, "tags[1]", "must be a string, got JSON number"},
		{"k", `{}`, `{"tags": [` + strings.Repeat(`"t",`, 100) + `"t"]}`, "tags", "must have at most 100 tags, got 101"},
		{"k", `{}`, `{"metadata": {"n": 1e-301}}`, "metadata", "is out of range"},
	} {
		_, err := conn.Exec(ctx, `INSERT INTO requests VALUES ($1, $2::jsonb, $3::jsonb)`, c.kind, c.payload, c.opts)
		refusal(t, err, c.field, c.message)
		_, _, err = enqueueSQL(ctx, conn, c.kind, c.payload, c.opts)
		refusal(t, err, c.field, c.message)
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM requests`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("requests holds %d rows (%v), want none", rows, err)
	}
	if n := countJobs(t, drv); n != 0 {
		t.Fatalf("%d jobs stored, want none", n)
	}
}

// TestSQLEnqueueFollowsStoredContracts: unknown kinds of a strict set, ops
// and derived keys follow the stored set; a kind with a payload schema is
// refused unless its contract allows SQL enqueue, and then stored unchecked.
func TestSQLEnqueueFollowsStoredContracts(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	ctx := t.Context()
	pool := drv.Pool()
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := contract.Parse([]byte(`version: 1
strict: true
kinds:
  file:
    ops: [ingest, delete]
    payload: {type: object, required: [path]}
  note:
    payload: {type: object, required: [text]}
    sql_enqueue: true
  ping: {}
  keyed:
    unique: {policy: active, fields: [payload.doc]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ContractsApply(ctx, set); err != nil {
		t.Fatal(err)
	}
	_, _, err = enqueueSQL(ctx, pool, "fil", `{}`, `{}`)
	refusal(t, err, "kind", `unknown kind "fil" (strict mode)`)
	_, _, err = enqueueSQL(ctx, pool, "file", `{"path": "/a"}`, `{"op": "ingest"}`)
	refusal(t, err, "kind", `kind "file" checks its payload against a JSON Schema, which skiplock_enqueue does not: its contract must allow it (sql_enqueue: true)`)
	_, _, err = enqueueSQL(ctx, pool, "ping", `{}`, `{"op": "x"}`)
	refusal(t, err, "op", `kind "ping" takes no op, got "x"`)
	_, _, err = enqueueSQL(ctx, pool, "keyed", `{}`, `{}`)
	refusal(t, err, "payload.doc", `missing property "doc" (kind "keyed" derives its idempotency key from it)`)
	_, _, err = enqueueSQL(ctx, pool, "keyed", `{"doc": {"a": 1}}`, `{}`)
	refusal(t, err, "payload.doc", "give an idempotency_key")
	if n := countJobs(t, drv); n != 0 {
		t.Fatalf("%d jobs stored, want none", n)
	}
	// Allowed: stored without its schema checked.
	id, _, err := enqueueSQL(ctx, pool, "note", `{"no_text": true}`, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if j, err := client.JobGet(ctx, id); err != nil || string(j.Payload) != `{"no_text": true}` {
		t.Fatalf("note job: %+v, %v", j, err)
	}
	if _, _, err := enqueueSQL(ctx, pool, "ping", `{}`, `{}`); err != nil {
		t.Fatal(err)
	}
	// A set applied before the function could read it is refused.
	if _, err := pool.Exec(ctx, `UPDATE skiplock_contracts SET defaults = NULL`); err != nil {
		t.Fatal(err)
	}
	_, _, err = enqueueSQL(ctx, pool, "ping", `{}`, `{}`)
	refusal(t, err, "kind", "apply the contract set again")
}

// TestSQLEnqueueIsTransactional: a rolled back caller leaves no job and
// wakes nobody; a committed one sends the wake-up of the job's queue at
// commit.
func TestSQLEnqueueIsTransactional(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := t.Context()
	listener := listenInserts(t, url)
	conn := pgtest.Conn(t, url)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := enqueueSQL(ctx, tx, "k", `{}`, `{"queue": "rolled_back"}`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countJobs(t, drv); n != 0 {
		t.Fatalf("%d jobs after rollback, want none", n)
	}
	tx, err = conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := enqueueSQL(ctx, tx, "k", `{}`, `{"queue": "committed"}`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	note, err := listener.WaitForNotification(wctx)
	if err != nil {
		t.Fatal(err)
	}
	// The rolled back insert's wake-up never went out: the first is this one.
	if note.Payload != "committed" {
		t.Fatalf("wake-up of queue %q, want committed", note.Payload)
	}
	if n := countJobs(t, drv); n != 1 {
		t.Fatalf("%d jobs after commit, want 1", n)
	}
}

// TestSQLEnqueueFromAnotherSchema: called by its schema from a session
// whose search_path does not reach Skiplock's tables, the function stores
// the job in its own schema and wakes that schema's workers.
func TestSQLEnqueueFromAnotherSchema(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := t.Context()
	listener := listenInserts(t, url)
	var schema string
	if err := listener.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	outside := pgtest.Conn(t, pgtest.URL())
	var id int64
	err := outside.QueryRow(ctx, `SELECT id FROM `+pgx.Identifier{schema, "skiplock_enqueue"}.Sanitize()+
		`('k', '{}', '{"queue": "elsewhere"}')`).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if note, err := listener.WaitForNotification(wctx); err != nil || note.Payload != "elsewhere" {
		t.Fatalf("wake-up %+v, %v; want queue elsewhere", note, err)
	}
	if n := countJobs(t, drv); n != 1 {
		t.Fatalf("%d jobs in the schema, want 1", n)
	}
}
