package pgdriver_test

import (
	"slices"
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
func genericPlans(t *testing.T, name, types, args string) map[string]string {
	t.Helper()
	return plans(t, name, pgdriver.GenericPlan, 0, types, args)
}

// plans answers the plans of the statement name under settings over a new
// empty table, over 100,000 pending jobs and `running` running ones that
// ANALYZE has not seen, and over the table emptied by VACUUM.
func plans(t *testing.T, name, settings string, running int, types, args string) map[string]string {
	t.Helper()
	_, url := pgtest.Schema(t)
	ctx := t.Context()
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
// cannot know that LIMIT $4 is small): a 1M backlog fell from 50k to 1.6k
// jobs/s. Pinned but joined to the picked jobs, its plan made over a table
// vacuumed empty walked the table and probed the picked jobs for each row.
func TestClaimGenericPlanFindsJobsByKey(t *testing.T) {
	plans := genericPlans(t, "JobClaim",
		"(text, text, text[], int, float8[], float8, text, int, timestamptz, bigint, text[])",
		"('q', 'w', '{}', 1000, '{}', 300, NULL, -1, '-infinity', 0, '{}')")
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
	plans := genericPlans(t, "JobCompleteMany", "(text, bigint[], jsonb, jsonb)",
		`('w', '{1,2,3}', '{"1":1,"2":1,"3":1}', '{}')`)
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
	plans := plans(t, "JobHeartbeat", pgdriver.GenericPlan, 1000, "(text, bigint[], jsonb, jsonb)",
		`('w', '{100001,100002,100003}', '{"100001":1,"100002":1,"100003":1}', '{"100001":30,"100002":30,"100003":30}')`)
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
		types, args := "(int, timestamptz)", "(1000, '-infinity')"
		// The promoter names its parameters, numbered in the order it uses them.
		if slices.Equal(pgdriver.QueryParams(name), []string{"since", "limit"}) {
			types, args = "(timestamptz, int)", "('-infinity', 1000)"
		}
		for when, plan := range genericPlans(t, name, types, args) {
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
	plans := plans(t, "JobInsertStart", "SET LOCAL plan_cache_mode = auto", 0,
		"(text, text, text, text, boolean, int, jsonb, jsonb, text[], int, timestamptz, text, text, boolean, text, float8)",
		"('k', '', 'q', '', false, 0, '{}', '{}', '{}', 3, NULL, '', '', false, 'w', 60)")
	for when, plan := range plans {
		if n := strings.Count(plan, " on skiplock_queues"); n != 1 {
			t.Errorf("the insert-and-start plan made over %s probes the queue %d times, want 1:\n%s", when, n, plan)
		}
	}
}
