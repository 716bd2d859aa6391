package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// The hot paths, one statement each, per job: compare runs with benchstat.

func benchJobs(n int) []*driver.InsertParams {
	jobs := make([]*driver.InsertParams, n)
	for i := range jobs {
		jobs[i] = &driver.InsertParams{Kind: "bench", Queue: "default", Priority: 5, MaxRetries: 3,
			Payload: []byte(`{"n":1}`)}
	}
	return jobs
}

func insertPending(b testing.TB, d *pgdriver.Driver, n int) {
	b.Helper()
	for done := 0; done < n; done += 1000 {
		if _, err := d.JobInsertFast(context.Background(), benchJobs(min(1000, n-done))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJobInsertFast1000(b *testing.B) {
	d, _ := pgtest.Schema(b)
	jobs := benchJobs(1000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.JobInsertFast(ctx, jobs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "jobs/s")
}

func BenchmarkJobClaim(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		b.Run(itoa(batch), func(b *testing.B) {
			d, _ := pgtest.Schema(b)
			ctx := context.Background()
			p := driver.ClaimParams{Queue: "default", WorkerID: "w", Max: batch, DefaultLease: time.Minute}
			claimed := 0
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				insertPending(b, d, batch)
				b.StartTimer()
				jobs, err := d.JobClaim(ctx, p)
				if err != nil || len(jobs) != batch {
					b.Fatalf("claim: %d jobs, %v", len(jobs), err)
				}
				claimed += len(jobs)
			}
			b.ReportMetric(float64(claimed)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

func BenchmarkJobCompleteMany(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		b.Run(itoa(batch), func(b *testing.B) {
			d, _ := pgtest.Schema(b)
			ctx := context.Background()
			p := driver.ClaimParams{Queue: "default", WorkerID: "w", Max: batch, DefaultLease: time.Minute}
			done := 0
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				insertPending(b, d, batch)
				jobs, err := d.JobClaim(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				complete := make([]driver.CompleteParams, len(jobs))
				for i, j := range jobs {
					complete[i] = driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: "w"}}
				}
				b.StartTimer()
				ids, err := d.JobCompleteMany(ctx, complete)
				if err != nil || len(ids) != batch {
					b.Fatalf("complete: %d jobs, %v", len(ids), err)
				}
				done += len(ids)
			}
			b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

func itoa(n int) string {
	switch n {
	case 1:
		return "batch=1"
	case 100:
		return "batch=100"
	}
	return "batch=1000"
}

// BenchmarkJobInsertDependent inserts one child of a running parent beside
// 10,000 children already waiting for it.
func BenchmarkJobInsertDependent(b *testing.B) {
	d, _ := pgtest.Schema(b)
	ctx := context.Background()
	insertPending(b, d, 1)
	parent, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 1, DefaultLease: time.Hour})
	if err != nil || len(parent) != 1 {
		b.Fatalf("claim the parent: %v, %v", parent, err)
	}
	child := func(n int) []*driver.InsertParams {
		jobs := benchJobs(n)
		for _, j := range jobs {
			j.DependsOn = []int64{parent[0].ID}
		}
		return jobs
	}
	for range 10 {
		if _, err := d.JobInsertMany(ctx, child(1000)); err != nil {
			b.Fatal(err)
		}
	}
	one := child(1)
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.JobInsertMany(ctx, one); err != nil {
			b.Fatal(err)
		}
	}
}
