package pgdriver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestListFiltersReadTheirIndexes: over 50,000 archived jobs, once the
// filter indexes are added (`skiplock migrate filter-indexes [--payload]`),
// a listing by tag, metadata, payload, worker, error type, created or finished time reads the
// archive by that filter's index, not by walking every job newest first.
// The times are BenchmarkJobListFiltered's.
func TestListFiltersReadTheirIndexes(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	conn := pgtest.Conn(t, url)
	// One in 1,000 jobs has the tag "rare" and the worker "w_rare", one in
	// 500 a timeout; 10,000 customers; a job created every 10 s over ~6 days.
	_, err := conn.Exec(ctx, `
INSERT INTO skiplock_jobs_archive (id, kind, queue, state, tags, payload, metadata, worker_id, errors, attempt,
    run_at, created_at, started_at, finished_at, updated_at)
SELECT i, 'crawl', 'default', CASE WHEN i % 500 = 0 THEN 'failed' ELSE 'completed' END,
    CASE WHEN i % 1000 = 0 THEN ARRAY['rare'] ELSE ARRAY['common'] END,
    jsonb_build_object('customer_id', i % 10000, 'order', jsonb_build_object('id', 'o' || i)),
    jsonb_build_object('customer', 'c' || (i % 10000)), CASE WHEN i % 1000 = 0 THEN 'w_rare' ELSE 'w' || (i % 100) END,
    CASE WHEN i % 500 = 0 THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'type', 'timeout',
        'message', 'slow', 'at', now(), 'retryable', false)) ELSE '[]'::jsonb END, 1,
    t, t, t, t + interval '1 second', t + interval '1 second'
FROM generate_series(1, 50000) i, LATERAL (SELECT now() - (50000 - i) * interval '10 s' AS t) x`)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.AddFilterIndexes(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.AddPayloadIndex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// As autovacuum would: statistics, and the BRIN ranges summarised.
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE skiplock_jobs_archive`); err != nil {
		t.Fatal(err)
	}
	mid := time.Now().Add(-250000 * time.Second)
	for _, c := range []struct {
		name, index string
		p           driver.ListParams
	}{
		{"tag", "tags", driver.ListParams{Tags: []string{"rare"}}},
		{"metadata", "metadata", driver.ListParams{Metadata: map[string]any{"customer": "c42"}}},
		{"payload", "payload", driver.ListParams{Payload: map[string]any{"customer_id": 42}}},
		{"nested payload", "payload", driver.ListParams{Payload: map[string]any{"order.id": "o4242"}}},
		{"worker", "worker", driver.ListParams{WorkerID: "w_rare"}},
		{"error type", "errors", driver.ListParams{ErrorType: "timeout"}},
		{"created hour", "created", driver.ListParams{CreatedAfter: mid, CreatedBefore: mid.Add(time.Hour)}},
		{"finished hour", "finished_at", driver.ListParams{FinishedAfter: mid, FinishedBefore: mid.Add(time.Hour)}},
	} {
		c.p.Limit = 50
		args, err := pgdriver.JobListArgs(c.p)
		if err != nil {
			t.Fatal(err)
		}
		// As the driver runs it: unprepared, planned with its values.
		rows, err := conn.Query(ctx, "EXPLAIN (COSTS OFF) "+pgdriver.Query("JobList"),
			append([]any{pgx.QueryExecModeDescribeExec}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		// Days past the partitions made ahead sit in the default partition.
		if !strings.Contains(plan, " on skiplock_jobs_archive_default_"+c.index+"_idx") {
			t.Errorf("listing by %s does not read the %s index:\n%s", c.name, c.index, plan)
		}
	}
}
