package pgdriver_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// The parameters of the hot statements on Citus, by name: type and value.
var (
	citusHeld = map[string][2]string{"id": {"bigint", "1"}, "queue": {"text", "'q'"},
		"attempt": {"int", "1"}, "worker_id": {"text", "'w'"}}
	citusBatch = map[string][2]string{"ids": {"bigint[]", "'{1,2}'"}, "queues": {"text[]", "'{q}'"},
		"worker_id": {"text", "'w'"}, "attempts": {"jsonb", `'{"1":1,"2":1}'`}}
)

// with answers params and more.
func with(params map[string][2]string, more map[string][2]string) map[string][2]string {
	out := map[string][2]string{}
	for _, m := range []map[string][2]string{params, more} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestCitusHotStatementsAreOneShards: on a schema distributed on Citus the
// coordinator plans the claim, a batch completion and heartbeat of one
// queue's jobs, an idempotency lookup and the statements of one held job
// (complete, fail, progress) as steps of one task each, on one shard; a
// batch that does not name its queues goes to every shard.
func TestCitusHotStatementsAreOneShards(t *testing.T) {
	_, url := pgtest.CitusSchema(t)
	conn := pgtest.Conn(t, url)
	tasks := func(name string, params map[string][2]string) (int, string) {
		t.Helper()
		types, args := prepared(t, name, params)
		stmt := "citus_" + strings.ToLower(name)
		if _, err := conn.Exec(t.Context(), "PREPARE "+stmt+types+" AS "+pgdriver.Query(name)); err != nil {
			t.Fatalf("prepare %s: %v", name, err)
		}
		var plan strings.Builder
		rows, err := conn.Query(t.Context(), "EXPLAIN (COSTS OFF) EXECUTE "+stmt+args)
		if err != nil {
			t.Fatalf("explain %s: %v", name, err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("explain %s: %v", name, err)
		}
		// Each step of the plan (a statement's CTEs may be steps of their
		// own) says how many tasks, one per shard, it runs.
		n := 0
		for _, m := range regexp.MustCompile(`Task Count: (\d+)`).FindAllStringSubmatch(plan.String(), -1) {
			c, _ := strconv.Atoi(m[1])
			n = max(n, c)
		}
		if n == 0 {
			t.Fatalf("%s: no Task Count in its plan:\n%s", name, plan.String())
		}
		return n, plan.String()
	}
	for name, params := range map[string]map[string][2]string{
		"JobClaim": {"queue": {"text", "'q'"}, "kinds": {"text[]", "'{}'"}, "tenant": {"text", "NULL"},
			"after_rank": {"int", "-1"}, "after_run_at": {"timestamptz", "'-infinity'"}, "after_id": {"bigint", "0"},
			"max": {"int", "10"}, "worker_id": {"text", "'w'"}, "leases": {"float8[]", "'{}'"},
			"lease_kinds": {"text[]", "'{}'"}, "default_lease": {"float8", "30"}},
		"CitusJobCompleteMany":    with(citusBatch, map[string][2]string{"results": {"jsonb", "'{}'"}}),
		"CitusJobHeartbeatQueues": with(citusBatch, map[string][2]string{"leases": {"jsonb", `'{"1":30,"2":30}'`}}),
		"CitusJobByKey":           {"tenant": {"text", "''"}, "key": {"text", "'k'"}, "queue": {"text", "'q'"}},
		"CitusJobCompleteHeld":    with(citusHeld, map[string][2]string{"result": {"jsonb", "NULL"}}),
		"CitusJobFailHeld": with(citusHeld, map[string][2]string{"retryable": {"boolean", "true"},
			"waits": {"float8[]", "'{}'"}, "wait_kinds": {"text[]", "'{}'"}, "wait": {"float8", "1"},
			"error": {"jsonb", `'[{"type":"x"}]'`}}),
		"CitusJobProgress": with(citusHeld, map[string][2]string{"progress": {"int", "5"},
			"progress_message": {"text", "NULL"}, "checkpoint": {"jsonb", "NULL"}, "leases": {"float8[]", "'{}'"},
			"lease_kinds": {"text[]", "'{}'"}, "lease": {"float8", "30"}}),
	} {
		if n, plan := tasks(name, params); n != 1 {
			t.Errorf("%s: a step of %d tasks on Citus, want 1 (one shard):\n%s", name, n, plan)
		}
	}
	unnamed := map[string][2]string{"ids": citusBatch["ids"], "worker_id": citusBatch["worker_id"],
		"attempts": citusBatch["attempts"], "results": {"jsonb", "'{}'"}}
	if n, plan := tasks("JobCompleteMany", unnamed); n != pgtest.CitusShards {
		t.Errorf("JobCompleteMany without queues: %d tasks, want %d (every shard):\n%s", n, pgtest.CitusShards, plan)
	}
}
