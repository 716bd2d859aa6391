package pgdriver_test

import (
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// genericPlans answers the generic plans PostgreSQL makes for the statement
// name under the driver's settings: over a new empty table, over 100,000
// pending jobs that ANALYZE has seen, and over a table that VACUUM has
// emptied to no pages. A connection keeps the plan it made first, whatever
// the table becomes.
func genericPlans(t *testing.T, name string, params map[string][2]string) map[string]string {
	t.Helper()
	return plans(t, name, pgdriver.GenericPlan, 0, params)
}

// prepared answers the parameter types of a PREPARE of the statement name
// and the arguments of an EXECUTE, in the order the driver numbers its
// parameters, from params: each parameter's type and value by name.
func prepared(t *testing.T, name string, params map[string][2]string) (types, args string) {
	t.Helper()
	names := pgdriver.QueryParams(name)
	if len(names) != len(params) {
		t.Fatalf("%s takes %v, the test gives %d", name, names, len(params))
	}
	var ts, as []string
	for _, n := range names {
		p, ok := params[n]
		if !ok {
			t.Fatalf("%s takes @%s, which the test does not give", name, n)
		}
		ts, as = append(ts, p[0]), append(as, p[1])
	}
	return "(" + strings.Join(ts, ", ") + ")", "(" + strings.Join(as, ", ") + ")"
}

// plans answers the plans of the statement name under settings over a new
// empty table, over 100,000 pending jobs and `running` running ones that
// ANALYZE has not seen, and over the table emptied by VACUUM.
func plans(t *testing.T, name, settings string, running int, params map[string][2]string) map[string]string {
	t.Helper()
	types, args := prepared(t, name, params)
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	if name == "JobClaimFair" {
		// As a client with Fairness makes it when it starts.
		if err := d.FairIndexEnsure(ctx); err != nil {
			t.Fatal(err)
		}
	}
	conn := pgtest.Conn(t, url)
	exec := func(stmts ...string) {
		t.Helper()
		for _, stmt := range stmts {
			if _, err := conn.Exec(ctx, stmt, pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatalf("%.60s: %v", stmt, err)
			}
		}
	}
	plan := func() string {
		t.Helper()
		exec("DEALLOCATE ALL", "BEGIN", settings, "PREPARE s"+types+" AS "+pgdriver.Query(name))
		rows, err := conn.Query(ctx, "EXPLAIN (COSTS OFF) EXECUTE s"+args, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		exec("ROLLBACK")
		return strings.Join(lines, "\n")
	}
	plans := map[string]string{"an empty table": plan()}
	// The running jobs started after ANALYZE looked, as they do between
	// two analyses: the planner takes the running-lease index for empty.
	exec(`INSERT INTO skiplock_jobs (kind, queue, state) SELECT 'k', 'q', 'pending' FROM generate_series(1, 100000)`,
		`ANALYZE skiplock_jobs`,
		`INSERT INTO skiplock_jobs (kind, queue, state, worker_id, attempt, lease_until)
		SELECT 'k', 'q', 'running', 'w', 1, now() + interval '1 minute' FROM generate_series(1, `+strconv.Itoa(running)+`)`)
	plans["100,000 jobs"] = plan()
	// Emptied by vacuum, the table has no pages and ANALYZE saw no rows: the
	// planner takes it for empty, not for the ten pages of a new table.
	exec(`DELETE FROM skiplock_jobs`, `VACUUM ANALYZE skiplock_jobs`)
	plans["a table vacuumed empty"] = plan()
	return plans
}

// byKeyAlone reports whether plan finds jobs by primary key from the id
// array and joins nothing to the jobs table.
func byKeyAlone(plan string) bool {
	return strings.Contains(plan, "Index Scan using skiplock_jobs_pkey on skiplock_jobs j\n") &&
		strings.Contains(plan, "Index Cond: (id = ANY (") &&
		!strings.Contains(plan, "Join Filter") && !strings.Contains(plan, "Seq Scan on skiplock_jobs") &&
		!strings.Contains(plan, "Hash Join")
}

// TestClaimGenericPlanFindsJobsByKey: the claim's generic plan must pick
// by the claim index and update the picked jobs through the primary key.
// Unpinned, it scanned the whole table for each claim when it was made over
// an empty table, and hashed the whole table when made over a large one (it
// cannot know that LIMIT @max is small): a 1M backlog fell from 50k to 1.6k
// jobs/s. Pinned but joined to the picked jobs, its plan made over a table
// vacuumed empty walked the table and probed the picked jobs for each row.
func TestClaimGenericPlanFindsJobsByKey(t *testing.T) {
	plans := genericPlans(t, "JobClaim", claimParams(map[string][2]string{"tenant": {"text", "NULL"},
		"after_rank": {"int", "-1"}, "after_run_at": {"timestamptz", "'-infinity'"}, "after_id": {"bigint", "0"}}))
	for when, plan := range plans {
		if !byKeyAlone(plan) || !strings.Contains(plan, "Index Scan using skiplock_jobs_claim") ||
			strings.Contains(plan, "Nested Loop") {
			t.Errorf("the claim's generic plan made over %s does not go by index alone:\n%s", when, plan)
		}
	}
}

// TestCompletionGenericPlanFindsJobsByKey: the completion, too, runs its
// generic plan; it must find the finished jobs by primary key alone, never
// walk the table (or the running-lease index) and probe the batch per row.
func TestCompletionGenericPlanFindsJobsByKey(t *testing.T) {
	plans := genericPlans(t, "JobCompleteMany", map[string][2]string{"worker_id": {"text", "'w'"},
		"ids": {"bigint[]", "'{1,2,3}'"}, "attempts": {"jsonb", `'{"1":1,"2":1,"3":1}'`}, "results": {"jsonb", "'{}'"}})
	for when, plan := range plans {
		if !byKeyAlone(plan) || strings.Contains(plan, "skiplock_jobs_lease") {
			t.Errorf("the completion's generic plan made over %s does not find jobs by primary key alone:\n%s", when, plan)
		}
	}
}

// TestHeartbeatPlanFindsJobsByKey: the heartbeat of a batch of jobs must
// find them by primary key alone, not walk the running-lease index (every
// running job of every process, and every entry vacuum has not yet removed)
// or the table, probing the batch for each row.
func TestHeartbeatPlanFindsJobsByKey(t *testing.T) {
	plans := plans(t, "JobHeartbeat", pgdriver.GenericPlan, 1000, map[string][2]string{"worker_id": {"text", "'w'"},
		"ids":      {"bigint[]", "'{100001,100002,100003}'"},
		"attempts": {"jsonb", `'{"100001":1,"100002":1,"100003":1}'`},
		"leases":   {"jsonb", `'{"100001":30,"100002":30,"100003":30}'`}})
	for when, plan := range plans {
		if !byKeyAlone(plan) || strings.Contains(plan, "skiplock_jobs_lease") {
			t.Errorf("the heartbeat's plan made over %s does not find jobs by primary key alone:\n%s", when, plan)
		}
	}
}

// TestMaintenanceGenericPlansFindJobsByKey: the rescuer and the promoter
// change the jobs they picked through the primary key alone, whatever the
// table was when the connection made its plan.
func TestMaintenanceGenericPlansFindJobsByKey(t *testing.T) {
	for _, name := range []string{"JobRescueRequeue", "JobRescueFinal", "JobPromoteScheduled"} {
		params := map[string][2]string{"limit": {"int", "1000"}, "since": {"timestamptz", "'-infinity'"}}
		for when, plan := range genericPlans(t, name, params) {
			if !byKeyAlone(plan) {
				t.Errorf("%s's generic plan made over %s does not find jobs by primary key alone:\n%s", name, when, plan)
			}
		}
	}
}

// TestInsertStartProbesQueueOnce: an insert that starts its job at once
// asks once whether its queue is paused. Inlined, the state's subquery ran
// once for each column that reads the state: six probes per insert.
func TestInsertStartProbesQueueOnce(t *testing.T) {
	plans := plans(t, "JobInsertStart", "SET LOCAL plan_cache_mode = auto", 0, map[string][2]string{
		"kind": {"text", "'k'"}, "op": {"text", "''"}, "queue": {"text", "'q'"}, "tenant": {"text", "''"},
		"paused": {"boolean", "false"}, "priority": {"int", "0"}, "payload": {"jsonb", "'{}'"},
		"metadata": {"jsonb", "'{}'"}, "tags": {"text[]", "'{}'"}, "max_retries": {"int", "3"},
		"run_at": {"timestamptz", "NULL"}, "workflow_id": {"text", "''"}, "stage": {"text", "''"},
		"run_on_parent_failure": {"boolean", "false"}, "worker_id": {"text", "'w'"}, "lease": {"float8", "60"}})
	for when, plan := range plans {
		if n := strings.Count(plan, " on skiplock_queues"); n != 1 {
			t.Errorf("the insert-and-start plan made over %s probes the queue %d times, want 1:\n%s", when, n, plan)
		}
	}
}

// claimParams are the parameters every claim statement takes, with more.
func claimParams(more map[string][2]string) map[string][2]string {
	params := map[string][2]string{"queue": {"text", "'q'"}, "worker_id": {"text", "'w'"},
		"kinds": {"text[]", "'{}'"}, "max": {"int", "1000"}, "lease_kinds": {"text[]", "'{}'"},
		"leases": {"float8[]", "'{}'"}, "default_lease": {"float8", "300"}}
	maps.Copy(params, more)
	return params
}
