package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// statementLog records the statements a pool sends, for counting round
// trips.
type statementLog struct {
	mu   sync.Mutex
	sqls []string
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	l.sqls = append(l.sqls, strings.Join(strings.Fields(d.SQL), " "))
	l.mu.Unlock()
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *statementLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	l.mu.Lock()
	l.sqls = append(l.sqls, "batch")
	l.mu.Unlock()
	return ctx
}

func (l *statementLog) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (l *statementLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// take answers the statements since the last take, leaving out the token
// lookups of authentication, the wake-up listener's own session (it
// connects, and reconnects, on a connection of the pool whenever it will)
// and the driver's read of the spill target, which an insert starts in the
// background and which may land in a later call's window.
func (l *statementLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.sqls {
		listener := strings.HasPrefix(s, "LISTEN ") || strings.HasPrefix(s, "UNLISTEN ") || s == "SELECT current_schema()"
		spillRead := strings.HasPrefix(s, "SELECT coalesce((SELECT name FROM skiplock_hot_spill WHERE target)")
		if !strings.Contains(s, "skiplock_tokens") && !listener && !spillRead {
			out = append(out, s)
		}
	}
	l.sqls = nil
	return out
}

// tracedPostgres answers a migrated PostgreSQL driver whose statements log
// records.
func tracedPostgres(t *testing.T, log *statementLog) driver.Driver {
	_, url := pgtest.Schema(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = log
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pgdriver.New(pool)
}

// TestCompleteWithAttemptIsOneStatement counts the statements of an HTTP
// completion that names its attempt: the fenced report is one statement
// that answers the finished job (no read before it, none after, no
// transaction around it).
func TestCompleteWithAttemptIsOneStatement(t *testing.T) {
	t.Parallel()
	log := &statementLog{}
	drv := tracedPostgres(t, log)
	b := setupOn(t, drv, nil)
	res, err := drv.JobInsertMany(t.Context(), []*driver.InsertParams{{Kind: "k", Queue: "default", Priority: 5,
		MaxRetries: 3}})
	if err != nil {
		t.Fatal(err)
	}
	j := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", map[string]any{"worker_id": "w"}), 200).jobs()[0]
	if id(j) != res[0].Job.ID {
		t.Fatalf("claimed %v, want job %d", j["id"], res[0].Job.ID)
	}
	log.take()
	done := must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", id(j)), "",
		map[string]any{"worker_id": "w", "attempt": j["attempt"], "result": map[string]any{"ok": true}}), 200).job()
	sqls := log.take()
	if done["state"] != string(skiplock.StateCompleted) || done["progress"] != float64(100) {
		t.Fatalf("completed job: %v", done)
	}
	if len(sqls) != 1 || !strings.Contains(sqls[0], "DELETE FROM skiplock_jobs") {
		t.Fatalf("completion sent %d statements, want 1 (the fenced report):\n%s", len(sqls), strings.Join(sqls, "\n"))
	}

	// A report of a lost lease costs the refusal and one read that says
	// who holds the job now; it changes nothing.
	a := must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", id(j)), "",
		map[string]any{"worker_id": "w", "attempt": j["attempt"]}), 409)
	if code, _ := a.errCode(); code != "conflict" {
		t.Fatalf("second completion: %s", a.raw)
	}
}

// TestFailWithAttemptIsOneStatement counts the statements of an HTTP
// failure report that names its attempt: one fenced statement decides the
// outcome and answers the job. Without the attempt, one read comes first.
// (A retry due at once adds the wake-up of its queue, as an insert does.)
func TestFailWithAttemptIsOneStatement(t *testing.T) {
	t.Parallel()
	log := &statementLog{}
	drv := tracedPostgres(t, log)
	b := setupOn(t, drv, nil)
	spec := &driver.InsertParams{Kind: "k", Queue: "default", Priority: 5, MaxRetries: 3}
	if _, err := drv.JobInsertMany(t.Context(), []*driver.InsertParams{spec, spec}); err != nil {
		t.Fatal(err)
	}
	claim := func() map[string]any {
		t.Helper()
		return must(t, b.do(t, "POST", "/v1/queues/default/claim", "", map[string]any{"worker_id": "w"}), 200).jobs()[0]
	}
	fail := func(j map[string]any, body map[string]any) []string {
		t.Helper()
		log.take()
		got := must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", id(j)), "", body), 200).job()
		if got["state"] != string(skiplock.StateScheduled) || got["worker_id"] != nil {
			t.Fatalf("failed job: %v", got)
		}
		return log.take()
	}
	j := claim()
	sqls := fail(j, map[string]any{"worker_id": "w", "attempt": j["attempt"], "retry_in_seconds": 60,
		"error": map[string]any{"type": "boom", "message": "it broke"}})
	if len(sqls) != 1 || !strings.Contains(sqls[0], "FOR UPDATE") {
		t.Fatalf("failure sent %d statements, want 1 (the fenced report):\n%s", len(sqls), strings.Join(sqls, "\n"))
	}

	j = claim()
	sqls = fail(j, map[string]any{"worker_id": "w", "retry_in_seconds": 60, "error": map[string]any{"type": "boom", "message": ""}})
	if len(sqls) != 2 {
		t.Fatalf("failure without its attempt sent %d statements, want 2 (a read, the report):\n%s", len(sqls),
			strings.Join(sqls, "\n"))
	}
}
