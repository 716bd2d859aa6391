package maintenance

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// flowKeyed inserts a job of each key (a concurrency of 1, a rate that
// refills at once), and with finish starts and completes them all.
func flowKeyed(t *testing.T, drv *sqlitedriver.Driver, finish bool, keys ...string) {
	t.Helper()
	ctx := context.Background()
	for _, k := range keys {
		p := &driver.InsertParams{Kind: "k", Queue: "q", Priority: 5,
			Flow: &driver.FlowKeys{ConcurrencyKey: k, ConcurrencyLimit: 1, RateKey: k, Rate: 1e9, Burst: 1}}
		if _, err := drv.JobInsertMany(ctx, []*driver.InsertParams{p}); err != nil {
			t.Fatal(err)
		}
	}
	if !finish {
		return
	}
	jobs, err := drv.JobClaim(ctx, driver.ClaimParams{Queue: "q", WorkerID: "w", Max: 100, DefaultLease: time.Minute, Flow: true})
	if err != nil || len(jobs) != len(keys) {
		t.Fatalf("claim: %d jobs, %v", len(jobs), err)
	}
	for _, j := range jobs {
		if _, err := drv.JobCompleteMany(ctx, []driver.CompleteParams{{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt,
			WorkerID: j.WorkerID}}}); err != nil {
			t.Fatal(err)
		}
	}
}

func flowKeyCount(t *testing.T, drv *sqlitedriver.Driver) int {
	t.Helper()
	var n int
	if err := drv.DB().QueryRow(`SELECT count(*) FROM (SELECT key FROM skiplock_flow_slots UNION SELECT key FROM skiplock_flow_buckets)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Keys idle for Idle by the sweeper's clock go, batch by batch, a run
// taking up where the last stopped; a key a live job carries stays.
func TestFlowSweeperDropsIdleKeysAcrossRuns(t *testing.T) {
	t.Parallel()
	drv := sqlitetest.New(t)
	flowKeyed(t, drv, true, "k\x1fa", "k\x1fb", "k\x1fc", "k\x1fd")
	flowKeyed(t, drv, false, "k\x1fe")
	clock := time.Now()
	sweeper := &FlowSweeper{Store: drv, BatchSize: 2, MaxBatches: 1, Now: func() time.Time { return clock }}
	// pass runs the sweeper until it has read the last key.
	pass := func() (dropped []int) {
		for {
			n, ended, err := sweeper.RunOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			dropped = append(dropped, n)
			if ended {
				return dropped
			}
		}
	}
	if got := pass(); !slices.Equal(got, []int{0, 0, 0}) {
		t.Fatalf("within the idle time: dropped %v by run, want none in 3 runs", got)
	}
	clock = clock.Add(2 * DefaultFlowSweepIdle)
	if got := pass(); !slices.Equal(got, []int{2, 2, 0}) {
		t.Fatalf("past the idle time: dropped %v by run, want a and b, c and d, then none", got)
	}
	if n := flowKeyCount(t, drv); n != 1 {
		t.Fatalf("%d keys left, want the live job's", n)
	}
}

// A run that stops at its bound runs again a second later, not an
// Interval later: a pass over more keys than a run reads ends.
func TestFlowSweeperDrainsMoreKeysThanARun(t *testing.T) {
	t.Parallel()
	drv := sqlitetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	flowKeyed(t, drv, true, "k\x1fa", "k\x1fb", "k\x1fc")
	later := time.Now().Add(2 * DefaultFlowSweepIdle)
	sweeper := &FlowSweeper{Store: drv, Interval: time.Hour, BatchSize: 1, MaxBatches: 1,
		Now: func() time.Time { return later }}
	go sweeper.Run(ctx)
	testwait.Until(t, 30*time.Second, "every idle key dropped", func() bool { return flowKeyCount(t, drv) == 0 })
}
