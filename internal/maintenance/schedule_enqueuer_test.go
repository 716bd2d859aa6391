package maintenance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/maintenance"
	"github.com/skiplock/skiplock/internal/pgtest"
)

func TestNextScheduleRunSkipsMissedIntervals(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	sc := &driver.Schedule{NextRunAt: start, Every: 10 * time.Minute}
	for now, want := range map[time.Time]time.Time{
		start:                       start.Add(10 * time.Minute),
		start.Add(time.Minute):      start.Add(10 * time.Minute),
		start.Add(10 * time.Minute): start.Add(20 * time.Minute),
		start.Add(25 * time.Minute): start.Add(30 * time.Minute),
	} {
		if got := maintenance.NextScheduleRun(sc, now); !got.Equal(want) {
			t.Errorf("now %s: next %s, want %s", now, got, want)
		}
	}
}

func TestScheduleEnqueuer(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	due := time.Now().Add(-25 * time.Minute).Truncate(time.Second).UTC()
	for _, s := range []*driver.Schedule{
		{Tenant: "acme", Key: "video:v1", Kind: "track", Queue: "tracking", Payload: []byte(`{"video_id":"v1"}`),
			Every: 10 * time.Minute, NextRunAt: due},
		{Key: "video:later", Kind: "track", Queue: "tracking", Every: time.Hour, NextRunAt: time.Now().Add(time.Hour)},
	} {
		if _, err := drv.ScheduleUpsert(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var woken []string
	var mu sync.Mutex
	enq := func() *maintenance.ScheduleEnqueuer {
		return &maintenance.ScheduleEnqueuer{Store: drv, OnInsert: func(q []string) {
			mu.Lock()
			woken = append(woken, q...)
			mu.Unlock()
		}}
	}
	// Two enqueuers at once (a split brain) enqueue the due run once.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if err := enq().RunOnce(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	jobs := listKind(t, ctx, drv, "track")
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	j := jobs[0]
	if j.Tenant != "acme" || j.Queue != "tracking" || string(j.Payload) != `{"video_id": "v1"}` ||
		j.IdempotencyKey != "schedule:video:v1:"+itoa(due.Unix()) || j.State != driver.StatePending {
		t.Fatalf("job %+v", j)
	}
	if len(woken) != 1 || woken[0] != "tracking" {
		t.Fatalf("woke %v, want [tracking]", woken)
	}
	s := scheduleOf(t, ctx, drv, "acme", "video:v1")
	if want := due.Add(30 * time.Minute); !s.NextRunAt.Equal(want) {
		t.Fatalf("next_run_at %s, want %s (missed intervals skipped)", s.NextRunAt, want)
	}
	if err := enq().RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(listKind(t, ctx, drv, "track")); n != 1 {
		t.Fatalf("%d jobs after a second run, want 1 (nothing due)", n)
	}
}

func listKind(t *testing.T, ctx context.Context, drv driver.FullDriver, kind string) []*driver.Job {
	t.Helper()
	jobs, err := drv.JobList(ctx, driver.ListParams{Kind: kind, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func scheduleOf(t *testing.T, ctx context.Context, drv driver.FullDriver, tenant, key string) *driver.Schedule {
	t.Helper()
	all, err := drv.ScheduleList(ctx, &tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Key == key {
			return s
		}
	}
	t.Fatalf("no schedule %q of tenant %q", key, tenant)
	return nil
}
