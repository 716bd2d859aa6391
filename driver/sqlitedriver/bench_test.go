package sqlitedriver_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

func benchJob() *driver.InsertParams {
	return &driver.InsertParams{Kind: "noop", Queue: "default", Priority: 5, MaxRetries: 3,
		Payload: []byte(`{"n":1}`)}
}

func BenchmarkInsertOne(b *testing.B) {
	d := sqlitetest.New(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := d.JobInsertMany(ctx, []*driver.InsertParams{benchJob()}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInsertFast1000(b *testing.B) {
	d := sqlitetest.New(b)
	ctx := context.Background()
	batch := make([]*driver.InsertParams, 1000)
	for i := range batch {
		batch[i] = benchJob()
	}
	for b.Loop() {
		if _, err := d.JobInsertFast(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkClaimComplete claims batches of 100 and completes them.
func BenchmarkClaimComplete100(b *testing.B) {
	d := sqlitetest.New(b)
	ctx := context.Background()
	batch := make([]*driver.InsertParams, 10000)
	for i := range batch {
		batch[i] = benchJob()
	}
	claim := driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 100, DefaultLease: time.Minute}
	for b.Loop() {
		jobs, err := d.JobClaim(ctx, claim)
		if err != nil {
			b.Fatal(err)
		}
		if len(jobs) == 0 {
			b.StopTimer()
			if _, err := d.JobInsertFast(ctx, batch); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			continue
		}
		done := make([]driver.CompleteParams, len(jobs))
		for i, j := range jobs {
			done[i] = driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: "w"}}
		}
		if _, err := d.JobCompleteMany(ctx, done); err != nil {
			b.Fatal(err)
		}
	}
}

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

// BenchmarkEndToEnd inserts b.N no-op jobs and runs them through a client;
// it reports jobs/s from the first insert to the last completion.
func BenchmarkEndToEnd(b *testing.B) {
	d := sqlitetest.New(b)
	ctx := context.Background()
	var done atomic.Int64
	finished := make(chan struct{})
	total := int64(b.N)
	ws := skiplock.NewWorkers()
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[noopArgs](func(ctx context.Context, j *skiplock.Job[noopArgs]) error {
		if done.Add(1) == total {
			close(finished)
		}
		return nil
	}))
	client, err := skiplock.NewClient(d, &skiplock.Config{
		Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 100}}, Workers: ws})
	if err != nil {
		b.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += 1000 {
		n := min(1000, b.N-i)
		params := make([]skiplock.InsertManyParams, n)
		for k := range params {
			params[k] = skiplock.InsertManyParams{Args: noopArgs{}}
		}
		if _, err := client.InsertMany(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	<-finished
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkJobListByKey finds a job by its idempotency key among 1,000,000
// archived jobs, with and without its tenant:
// go test ./driver/sqlitedriver -run '^$' -bench JobListByKey
func BenchmarkJobListByKey(b *testing.B) {
	d := sqlitetest.New(b)
	ctx := context.Background()
	_, err := d.DB().ExecContext(ctx, `
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000000)
INSERT INTO skiplock_jobs_archive (id, kind, queue, state, attempt, run_at, created_at, started_at, finished_at,
    updated_at, tenant, idempotency_key)
SELECT i, 'crawl', 'default', 'completed', 1, t, t, t, t, t, 't' || (i % 10), 'order-' || i
FROM (SELECT i, 1700000000000000 + i * 500000 AS t FROM s)`)
	if err != nil {
		b.Fatal(err)
	}
	tenant := "t2"
	for _, c := range []struct {
		name string
		p    driver.ListParams
	}{
		{"key", driver.ListParams{IdempotencyKey: "order-424242"}},
		{"key_and_tenant", driver.ListParams{IdempotencyKey: "order-424242", Tenant: &tenant}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c.p.Limit = 51
			for b.Loop() {
				jobs, err := d.JobList(ctx, c.p)
				if err != nil {
					b.Fatal(err)
				}
				if len(jobs) != 1 {
					b.Fatalf("%d jobs, want 1", len(jobs))
				}
			}
		})
	}
}
