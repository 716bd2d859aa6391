package pgdriver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestFlowSweepReadsByIndex: with 100,000 live jobs carrying keys, half in
// the hot table and half in a spill table, the sweep's look at a key
// probes each table's key indexes rather than reading the jobs; and the
// keys it reads come from a skip scan of the slots' primary key, not from
// every slot. Custom and generic plans alike.
func TestFlowSweepReadsByIndex(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	spilled := spill(t, d, true, longLockWait).Opened
	conn := pgtest.Conn(t, url)
	jobs := `INSERT INTO %s (kind, state, concurrency_key, rate_key)
		SELECT 'k', 'pending', 'c' || (i %% 1000), 'r' || (i %% 1000) FROM generate_series(1, 50000) i`
	for _, stmt := range []string{
		fmt.Sprintf(jobs, "skiplock_jobs"),
		fmt.Sprintf(jobs, pgx.Identifier{spilled}.Sanitize()),
		`INSERT INTO skiplock_flow_slots (key, slot) SELECT 'c' || i, s FROM generate_series(1, 2000) i, generate_series(1, 20) s`,
		`INSERT INTO skiplock_flow_buckets (key, rate, burst, tokens) SELECT 'r' || i, 1, 1, 1 FROM generate_series(1, 2000) i`,
		// This schema's tables only: a bare ANALYZE reads every table of the
		// database, and deadlocks with other tests dropping their schemas.
		`ANALYZE skiplock_jobs, ` + pgx.Identifier{spilled}.Sanitize() + `, skiplock_flow_slots, skiplock_flow_buckets`,
		`PREPARE idle(text[], timestamptz) AS ` + pgdriver.Query("FlowSweepIdle"),
		`PREPARE next(text, int) AS ` + pgdriver.Query("FlowSweepNext"),
	} {
		if _, err := conn.Exec(ctx, stmt, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	for name, want := range map[string]string{"FlowSweepIdle": "keys,before", "FlowSweepNext": "after,limit"} {
		if got := pgdriver.QueryParams(name); strings.Join(got, ",") != want {
			t.Fatalf("%s takes %v, the test gives %s", name, got, want)
		}
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		idle := explain(t, conn, mode, `EXECUTE idle('{c1,c2}', now())`)
		for _, index := range []string{"skiplock_jobs_concurrency_key", "skiplock_jobs_rate_key",
			spilled + "_concurrency_key_idx", spilled + "_rate_key_idx"} {
			if !strings.Contains(idle, "Index Scan on "+index+"\n") && !strings.Contains(idle, "Index Scan using "+index+" ") &&
				!strings.Contains(idle, "Index Only Scan using "+index+" ") {
				t.Fatalf("%s: the look at keys does not probe %s:\n%s", mode, index, idle)
			}
		}
		if strings.Contains(idle, "Seq Scan") {
			t.Fatalf("%s: the look at keys reads a whole table:\n%s", mode, idle)
		}
		next := explain(t, conn, mode, `EXECUTE next('', 1000)`)
		if !strings.Contains(next, "skiplock_flow_slots_pkey on skiplock_flow_slots") || strings.Contains(next, "Seq Scan on skiplock_flow_slots") {
			t.Fatalf("%s: the next keys are not read by a skip scan:\n%s", mode, next)
		}
	}
}

// explain answers the plan of stmt under plan_cache_mode mode.
func explain(t *testing.T, conn *pgx.Conn, mode, stmt string) string {
	t.Helper()
	if _, err := conn.Exec(t.Context(), "SET plan_cache_mode = "+mode, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(t.Context(), "EXPLAIN (COSTS OFF) "+stmt, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
