package vault

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// TestHourMetrics: per queue, counts by final state, and the mean and p95
// run time of the jobs that ran.
func TestHourMetrics(t *testing.T) {
	hour := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	var jobs []*skiplock.JobRow
	for i := range 20 {
		start := hour.Add(time.Minute)
		end := start.Add(time.Duration(i+1) * time.Second) // 1 s … 20 s
		st := skiplock.StateCompleted
		if i%5 == 0 {
			st = skiplock.StateFailed
		}
		jobs = append(jobs, &skiplock.JobRow{ID: int64(i + 1), Queue: "a", State: st, StartedAt: &start, FinishedAt: &end})
	}
	end := hour.Add(2 * time.Minute)
	jobs = append(jobs, &skiplock.JobRow{ID: 99, Queue: "b", State: skiplock.StateCancelled, FinishedAt: &end})
	m := hourMetrics(hour, jobs)
	if len(m) != 2 {
		t.Fatalf("%d rows, want one per queue", len(m))
	}
	a, b := m[0], m[1]
	if a.Queue != "a" || a.Jobs != 20 || a.Completed != 16 || a.Failed != 4 || a.Cancelled != 0 || a.Runs != 20 {
		t.Fatalf("queue a: %+v", a)
	}
	if a.RunMeanMs != 10500 || a.RunP95Ms != 19000 || a.RunTotalMs != 210000 {
		t.Fatalf("queue a run times: mean %v p95 %v total %v, want 10500, 19000, 210000", a.RunMeanMs, a.RunP95Ms, a.RunTotalMs)
	}
	if b.Queue != "b" || b.Jobs != 1 || b.Cancelled != 1 || b.Runs != 0 || b.RunMeanMs != 0 {
		t.Fatalf("queue b: %+v", b)
	}
}

// TestVaultMetricsAddUpParts: two stores into one hour sum their counts
// and weigh the mean by runs.
func TestVaultMetricsAddUpParts(t *testing.T) {
	v, _ := openDir(t)
	ctx := context.Background()
	hour := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	job := func(id int64, run time.Duration) *skiplock.JobRow {
		end := hour.Add(10*time.Minute + run)
		start := hour.Add(10 * time.Minute)
		return &skiplock.JobRow{ID: id, Queue: "q", State: skiplock.StateCompleted, RunAt: hour, CreatedAt: hour,
			UpdatedAt: end, StartedAt: &start, FinishedAt: &end}
	}
	if _, err := v.Store(ctx, []*skiplock.JobRow{job(1, time.Second)}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Store(ctx, []*skiplock.JobRow{job(2, 2*time.Second), job(3, 3*time.Second)}); err != nil {
		t.Fatal(err)
	}
	m, err := v.Metrics(ctx, hour, hour.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || m[0].Jobs != 3 || m[0].Completed != 3 || m[0].RunMeanMs != 2000 || m[0].RunP95Ms != 3000 {
		t.Fatalf("metrics %+v, want 3 jobs, mean 2000 ms, p95 3000 ms", m)
	}
}
