package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// BenchmarkJobListFiltered lists a page of 50 out of 1,000,000 archived
// jobs by each filter: go test ./driver/pgdriver -run '^$' -bench JobListFiltered
func BenchmarkJobListFiltered(b *testing.B) {
	d, url := pgtest.Schema(b)
	ctx := context.Background()
	conn := pgtest.Conn(b, url)
	// One in 1,000 jobs has the tag "rare", one in 500 a timeout ("slow");
	// 10,000 customers (in metadata and payload), 100 workers, 10 tenants; each job its own idempotency key;
	// a job created every half second over ~6 days.
	_, err := conn.Exec(ctx, `
INSERT INTO skiplock_jobs_archive (id, kind, queue, state, tags, payload, metadata, worker_id, errors, attempt,
    run_at, created_at, started_at, finished_at, updated_at, tenant, idempotency_key)
SELECT i, 'crawl', 'default', CASE WHEN i % 500 = 0 THEN 'failed' ELSE 'completed' END,
    CASE WHEN i % 1000 = 0 THEN ARRAY['rare'] ELSE ARRAY['common'] END,
    jsonb_build_object('customer_id', i % 10000, 'order', jsonb_build_object('id', 'o' || i)),
    jsonb_build_object('customer', 'c' || (i % 10000)), 'w' || (i % 100),
    CASE WHEN i % 500 = 0 THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'type', 'timeout',
        'message', 'slow', 'at', now(), 'retryable', false)) ELSE '[]'::jsonb END, 1,
    t, t, t, t + interval '1 second', t + interval '1 second', 't' || (i % 10), 'order-' || i
FROM generate_series(1, 1000000) i, LATERAL (SELECT now() - (1000000 - i) * interval '500 ms' AS t) x`)
	if err != nil {
		b.Fatal(err)
	}
	// With the filter indexes (skiplock migrate filter-indexes --payload),
	// then as autovacuum would: statistics, and the BRIN ranges summarised.
	if err := d.AddFilterIndexes(ctx, nil); err != nil {
		b.Fatal(err)
	}
	if err := d.AddPayloadIndex(ctx, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE skiplock_jobs_archive`); err != nil {
		b.Fatal(err)
	}
	mid := time.Now().Add(-250000 * time.Second)
	tenant2 := "t2"
	for _, c := range []struct {
		name string
		p    driver.ListParams
	}{
		{"none", driver.ListParams{}},
		{"tag_1_in_1000", driver.ListParams{Tags: []string{"rare"}}},
		{"metadata_1_in_10000", driver.ListParams{Metadata: map[string]any{"customer": "c42"}}},
		{"payload_1_in_10000", driver.ListParams{Payload: map[string]any{"customer_id": 42}}},
		{"payload_nested_1", driver.ListParams{Payload: map[string]any{"order.id": "o424242"}}},
		{"error_message_1_in_500", driver.ListParams{ErrorMessage: "SLOW"}},
		{"worker_1_in_100", driver.ListParams{WorkerID: "w7"}},
		{"error_type_1_in_500", driver.ListParams{ErrorType: "timeout"}},
		{"created_hour", driver.ListParams{CreatedAfter: mid, CreatedBefore: mid.Add(time.Hour)}},
		{"finished_hour", driver.ListParams{FinishedAfter: mid, FinishedBefore: mid.Add(time.Hour)}},
		{"idempotency_key", driver.ListParams{IdempotencyKey: "order-424242"}},
		{"idempotency_key_and_tenant", driver.ListParams{IdempotencyKey: "order-424242", Tenant: &tenant2}},
		{"tag_and_created_day", driver.ListParams{Tags: []string{"rare"}, CreatedAfter: mid, CreatedBefore: mid.Add(24 * time.Hour)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c.p.Limit = 50
			for b.Loop() {
				jobs, err := d.JobList(ctx, c.p)
				if err != nil {
					b.Fatal(err)
				}
				if len(jobs) == 0 {
					b.Fatal("no jobs")
				}
			}
		})
	}
}
