package maintenance_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/maintenance"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func TestParseCron(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)
	for spec, want := range map[string]time.Time{
		"@every 1m":                       time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC),
		"@every 1s":                       time.Date(2026, 3, 1, 10, 0, 31, 0, time.UTC),
		"*/15 * * * *":                    time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC),
		"@hourly":                         time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC),
		"0 2 * * *":                       time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC),
		"CRON_TZ=Europe/Paris 0 12 * * *": time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC),
	} {
		s, err := maintenance.ParseCron(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := s.Next(at); !got.Equal(want) {
			t.Errorf("%s: next after %s = %s, want %s", spec, at, got, want)
		}
	}
	for _, bad := range []string{"", "every minute", "* * *", "@every 10ms", "@every x", "61 * * * *"} {
		if _, err := maintenance.ParseCron(bad); err == nil {
			t.Errorf("%q: parsed, want an error", bad)
		}
	}
}

type periodicBundle struct {
	drv   driver.FullDriver
	clock *fakeClock
	ctx   context.Context
}

func setupPeriodic(t *testing.T) *periodicBundle {
	t.Helper()
	drv, _ := pgtest.Schema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &periodicBundle{drv: drv, ctx: ctx,
		clock: &fakeClock{now: time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)}}
}

func (b *periodicBundle) enqueuer(t *testing.T, spec string, catchUp bool) *maintenance.PeriodicEnqueuer {
	t.Helper()
	s, err := maintenance.ParseCron(spec)
	if err != nil {
		t.Fatal(err)
	}
	return &maintenance.PeriodicEnqueuer{Store: b.drv, Now: b.clock.Now, Grace: 10 * time.Second,
		Entries: []maintenance.PeriodicEntry{{Name: "report", Schedule: s, CatchUp: catchUp,
			Params: func(tick time.Time) (*driver.InsertParams, error) {
				return &driver.InsertParams{Kind: "report", Queue: "default", Priority: 5, MaxRetries: 3}, nil
			}}}}
}

// keys answers the idempotency keys of the report jobs, oldest first.
func (b *periodicBundle) keys(t *testing.T) []string {
	t.Helper()
	jobs, err := b.drv.JobList(b.ctx, driver.ListParams{Kind: "report", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[len(jobs)-1-i] = j.IdempotencyKey
	}
	return out
}

func runOnce(t *testing.T, ctx context.Context, p *maintenance.PeriodicEnqueuer) {
	t.Helper()
	if err := p.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
}

func tick(h, m, s int) string {
	return "periodic:report:" + itoa(time.Date(2026, 3, 1, h, m, s, 0, time.UTC).Unix())
}

func TestPeriodicEachTickOnceWithTwoLeaders(t *testing.T) {
	t.Parallel()
	b := setupPeriodic(t)
	// Two leaders in a split brain, each with its own memory.
	p1, p2 := b.enqueuer(t, "@every 1m", false), b.enqueuer(t, "@every 1m", false)
	runOnce(t, b.ctx, p1) // first sight: ticks count from 10:00:30
	for _, at := range []time.Time{
		time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC), time.Date(2026, 3, 1, 10, 1, 5, 0, time.UTC),
		time.Date(2026, 3, 1, 10, 2, 1, 0, time.UTC), time.Date(2026, 3, 1, 10, 3, 2, 0, time.UTC),
	} {
		b.clock.Set(at)
		var wg sync.WaitGroup
		for _, p := range []*maintenance.PeriodicEnqueuer{p1, p2} {
			wg.Go(func() {
				if err := p.RunOnce(b.ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	want := []string{tick(10, 1, 0), tick(10, 2, 0), tick(10, 3, 0)}
	if got := b.keys(t); !equal(got, want) {
		t.Fatalf("jobs %v, want %v", got, want)
	}
}

func TestPeriodicMissedTicksSkipOrCatchUp(t *testing.T) {
	t.Parallel()
	for _, catchUp := range []bool{false, true} {
		b := setupPeriodic(t)
		runOnce(t, b.ctx, b.enqueuer(t, "@every 1m", catchUp))
		b.clock.Set(time.Date(2026, 3, 1, 10, 1, 3, 0, time.UTC))
		runOnce(t, b.ctx, b.enqueuer(t, "@every 1m", catchUp))
		// Every server is down from 10:01:03 to 12:30:40; a new process starts.
		b.clock.Set(time.Date(2026, 3, 1, 12, 30, 40, 0, time.UTC))
		runOnce(t, b.ctx, b.enqueuer(t, "@every 1m", catchUp))
		b.clock.Set(time.Date(2026, 3, 1, 12, 31, 1, 0, time.UTC))
		runOnce(t, b.ctx, b.enqueuer(t, "@every 1m", catchUp))
		want := []string{tick(10, 1, 0), tick(12, 31, 0)}
		if catchUp {
			want = []string{tick(10, 1, 0), tick(12, 30, 0), tick(12, 31, 0)}
		}
		if got := b.keys(t); !equal(got, want) {
			t.Fatalf("catch-up %v: jobs %v, want %v", catchUp, got, want)
		}
	}
}

func TestPeriodicFailoverGapWithinGrace(t *testing.T) {
	t.Parallel()
	b := setupPeriodic(t)
	runOnce(t, b.ctx, b.enqueuer(t, "@every 1s", false))
	// The leader dies at 10:00:30; the next one runs 8 s later (grace 10 s):
	// the ticks of the gap are due, not missed.
	b.clock.Set(time.Date(2026, 3, 1, 10, 0, 38, 0, time.UTC))
	runOnce(t, b.ctx, b.enqueuer(t, "@every 1s", false))
	if got := b.keys(t); len(got) != 8 || got[0] != tick(10, 0, 31) || got[7] != tick(10, 0, 38) {
		t.Fatalf("jobs %v, want the 8 ticks 10:00:31–10:00:38", got)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
