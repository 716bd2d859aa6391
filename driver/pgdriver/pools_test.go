package pgdriver_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// TestPoolsRefuseABudgetTooSmall: a budget that cannot hold the pools asked
// for is refused before any connection opens, naming the field.
func TestPoolsRefuseABudgetTooSmall(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	for _, c := range []struct {
		pools pgdriver.Pools
		want  string
	}{
		{pgdriver.Pools{Budget: 2}, "pools.budget: 2 connections do not hold"},
		{pgdriver.Pools{Claims: 8, Completions: 8, Budget: 10}, "pools.budget: 10 connections do not hold claims 8 + completions 8"},
		{pgdriver.Pools{Claims: -1}, "pools.claims: must be 0 (the default) or more, got -1"},
	} {
		_, err := pgdriver.Open(t.Context(), url, pgdriver.Options{Pools: c.pools})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open with %+v: %v, want an error containing %q", c.pools, err, c.want)
		}
	}
}

// TestPoolsKeepClaimsOffAFullCompletionPool: with every completion and
// maintenance connection taken, claims still run on their own pool, and a
// completion waits for its pool.
func TestPoolsKeepClaimsOffAFullCompletionPool(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	d, err := pgdriver.Open(t.Context(), url, pgdriver.Options{Pools: pgdriver.Pools{Claims: 1, Completions: 1, Maintenance: 1, Budget: 4}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	insertFast(t, d, 3, nil)
	pools := d.RolePools()
	if pools["claims"] == pools["completions"] || pools["claims"] == pools["maintenance"] {
		t.Fatal("the roles share a pool")
	}
	for _, role := range []string{"completions", "maintenance"} {
		c, err := pools[role].Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
	}
	jobs, err := d.JobClaim(t.Context(), driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 3, DefaultLease: time.Minute})
	if err != nil || len(jobs) != 3 {
		t.Fatalf("claim with the other pools full: %d jobs, %v", len(jobs), err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = d.JobCompleteMany(ctx, []driver.CompleteParams{{HeldJob: driver.HeldJob{ID: jobs[0].ID, WorkerID: "w", Attempt: jobs[0].Attempt}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("complete with its pool full: %v, want it to wait for the pool", err)
	}
}

// TestConnectionsStayWithinTheBudget: clients of many workers each keep to
// their budget (pools and listener) however many jobs they claim at once;
// pg_stat_activity counts their sessions by application_name.
func TestConnectionsStayWithinTheBudget(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	const budget = 5
	url += "&application_name=skiplock_budget_" + strings.ReplaceAll(t.Name(), "/", "_")
	var ds []*pgdriver.Driver
	for range 2 {
		d, err := pgdriver.Open(t.Context(), url, pgdriver.Options{Pools: pgdriver.Pools{Budget: budget}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		ds = append(ds, d)
	}
	insertFast(t, ds[0], 400, nil)
	done := make(chan error, 64)
	for i := range 64 {
		go func() {
			d := ds[i%2]
			for {
				jobs, err := d.JobClaim(t.Context(), driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 1, DefaultLease: time.Minute})
				if err != nil || len(jobs) == 0 {
					done <- err
					return
				}
				if _, err := d.JobCompleteMany(t.Context(), []driver.CompleteParams{{HeldJob: driver.HeldJob{ID: jobs[0].ID, WorkerID: "w", Attempt: jobs[0].Attempt}}}); err != nil {
					done <- err
					return
				}
			}
		}()
	}
	for range 64 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	var open int
	app := url[strings.Index(url, "application_name=")+len("application_name="):]
	if err := ds[0].Pool().QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&open); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		for role, p := range d.RolePools() {
			if p.Stat().MaxConns() > budget {
				t.Errorf("%s pool of %d connections past a budget of %d", role, p.Stat().MaxConns(), budget)
			}
		}
	}
	if open > 2*budget {
		t.Errorf("%d sessions open for 2 drivers of a budget of %d", open, budget)
	}
}

// TestPoolsSayWhenAPoolWasFull: a pool whose acquires waited because it was
// full is named in a warning, with what to raise.
func TestPoolsSayWhenAPoolWasFull(t *testing.T) {
	_, url := pgtest.Schema(t)
	defer pgdriver.SetPoolWatchInterval(50 * time.Millisecond)()
	var log syncLog
	d, err := pgdriver.Open(t.Context(), url, pgdriver.Options{Pools: pgdriver.Pools{Claims: 1, Completions: 1, Maintenance: 1},
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	// A claim while the test holds the pool's one connection waits for it;
	// the pool counts a wait once the acquire succeeds. A claim that comes
	// after the release waited for nothing: try again.
	claims := d.RolePools()["claims"]
	for i := 0; claims.Stat().EmptyAcquireCount()-claims.Stat().NewConnsCount() <= 0; i++ {
		if i == 50 {
			t.Fatal("no claim waited for the claims pool in 50 tries")
		}
		held, err := claims.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		claimed := make(chan error, 1)
		go func() {
			_, err := d.JobClaim(t.Context(), driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 1, DefaultLease: time.Minute})
			claimed <- err
		}()
		time.Sleep(100 * time.Millisecond)
		held.Release()
		if err := <-claimed; err != nil {
			t.Fatal(err)
		}
	}
	want := `msg="connection budget: the claims pool was full; raise pools.claims (and pools.budget) if this persists" pool=claims size=1 waits=`
	testwait.Until(t, 30*time.Second, "the warning "+want+" in:\n"+log.String(), func() bool { return strings.Contains(log.String(), want) })
	if strings.Contains(log.String(), "pool=completions") || strings.Contains(log.String(), "pool=maintenance") {
		t.Errorf("a pool that was never full is named:\n%s", log.String())
	}
}

// syncLog is a log sink the test reads while the driver writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPoolsOfOneConnection: a maintenance pool of one runs the rescuer,
// whose transaction once asked the pool for a second connection (whether
// the schema is on Citus) and waited for it forever.
func TestPoolsOfOneConnection(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	d, err := pgdriver.Open(t.Context(), url, pgdriver.Options{Pools: pgdriver.Pools{Claims: 1, Completions: 1, Maintenance: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := d.JobRescue(ctx, 100, time.Time{}); err != nil {
		t.Fatalf("JobRescue on a maintenance pool of one: %v", err)
	}
}

// TestPoolsQuietOnShortWaits: acquires that waited, in all, less than a
// tenth of the interval (as a process's services that tick together do on
// one connection) are no warning.
func TestPoolsQuietOnShortWaits(t *testing.T) {
	_, url := pgtest.Schema(t)
	defer pgdriver.SetPoolWatchInterval(3 * time.Second)()
	var log syncLog
	d, err := pgdriver.Open(t.Context(), url, pgdriver.Options{Pools: pgdriver.Pools{Claims: 1, Completions: 1, Maintenance: 1},
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	claims := d.RolePools()["claims"]
	start := claims.Stat()
	held, err := claims.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	claimed := make(chan error, 1)
	go func() {
		_, err := d.JobClaim(t.Context(), driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 1, DefaultLease: time.Minute})
		claimed <- err
	}()
	time.Sleep(5 * time.Millisecond)
	held.Release()
	if err := <-claimed; err != nil {
		t.Fatal(err)
	}
	waited := claims.Stat().EmptyAcquireWaitTime() - start.EmptyAcquireWaitTime()
	time.Sleep(7 * time.Second) // two intervals
	if waited < 300*time.Millisecond && strings.Contains(log.String(), "connection budget") {
		t.Errorf("a wait of %s in 3 s was warned of:\n%s", waited, log.String())
	}
}
