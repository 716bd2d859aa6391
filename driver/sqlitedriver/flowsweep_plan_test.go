package sqlitedriver_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestFlowSweepReadsByIndex: among 20,000 live jobs carrying keys, the
// sweep's look at a key probes the key indexes rather than reading the
// jobs, and the keys it reads come from the slots' primary key.
func TestFlowSweepReadsByIndex(t *testing.T) {
	t.Parallel()
	d := sqlitetest.New(t)
	ctx := t.Context()
	for _, stmt := range []string{`
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO skiplock_jobs (kind, state, run_at, created_at, updated_at, concurrency_key, rate_key)
SELECT 'k', 'pending', 0, 0, 0, 'c' || (i % 1000), 'r' || (i % 1000) FROM n`, `
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO skiplock_flow_slots (key, slot) SELECT 'c' || i, 1 FROM n`,
		`ANALYZE`,
	} {
		if _, err := d.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	now := time.Now().UnixMicro()
	idle := queryPlan(t, d, "FlowSweepIdle", sql.Named("keys", `["c1","c2"]`), sql.Named("before", now), sql.Named("now", now))
	for _, index := range []string{"skiplock_jobs_concurrency_key", "skiplock_jobs_rate_key"} {
		if !strings.Contains(idle, "USING COVERING INDEX "+index+" ") && !strings.Contains(idle, "USING INDEX "+index+" ") {
			t.Fatalf("the look at keys does not probe %s:\n%s", index, idle)
		}
	}
	if strings.Contains(idle, "SCAN skiplock_jobs") || strings.Contains(idle, "SCAN j") {
		t.Fatalf("the look at keys reads the jobs:\n%s", idle)
	}
	next := queryPlan(t, d, "FlowSweepNext", sql.Named("after", ""), sql.Named("limit", 1000))
	if strings.Contains(next, "SCAN skiplock_flow_slots") || strings.Contains(next, "SCAN f ") {
		t.Fatalf("the next keys are not read by a skip scan:\n%s", next)
	}
}

// queryPlan answers the plan of the statement name run with args.
func queryPlan(t *testing.T, d *sqlitedriver.Driver, name string, args ...any) string {
	t.Helper()
	rows, err := d.DB().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+sqlitedriver.Query(name), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
