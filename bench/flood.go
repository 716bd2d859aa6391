package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock"
)

// Tenants of the flood: big enqueues the backlog, small a few jobs after it.
const (
	floodBig   = "big"
	floodSmall = "small"
	// smallStamp marks small's jobs for onWork.
	smallStamp = 1
)

// DefaultSmall is how many jobs the small tenant enqueues in flood mode.
const DefaultSmall = 100

// runFlood drains a flood: tenant big enqueues o.Jobs jobs, then tenant
// small o.Small; the workers start once all are in. It answers the rate
// over all of them and, in Extra, how many of big's jobs had run when
// small's last one ran, and when that was: with fairness on (--fair) a
// few of big's claims' worth; without it, nearly all of them.
func runFlood(ctx context.Context, o Options, sys *Skiplock, h *Harness) (Result, error) {
	h.defaults()
	if err := insertTenant(ctx, sys.client, floodBig, o.Jobs, h.Batch, 0); err != nil {
		return Result{}, err
	}
	if err := insertTenant(ctx, sys.client, floodSmall, o.Small, h.Batch, smallStamp); err != nil {
		return Result{}, err
	}
	var big, small, bigAtSmallDone atomic.Int64
	var smallDone atomic.Int64 // nanoseconds from start
	total := int64(o.Jobs + o.Small)
	start := time.Now()
	err := sys.Start(ctx, func(stamp int64) {
		if stamp != smallStamp {
			big.Add(1)
			return
		}
		if small.Add(1) == int64(o.Small) {
			bigAtSmallDone.Store(big.Load())
			smallDone.Store(int64(time.Since(start)))
		}
	})
	if err != nil {
		return Result{}, err
	}
	worked := &atomic.Int64{}
	stopProgress := h.show(func() string {
		return fmt.Sprintf("%s flood big %d/%d small %d/%d", sys.Name(), big.Load(), o.Jobs, small.Load(), o.Small)
	})
	go func() {
		for worked.Load() < total && ctx.Err() == nil {
			worked.Store(big.Load() + small.Load())
			_ = sleep(ctx, time.Millisecond)
		}
	}()
	err = waitDrained(ctx, sys, worked, total)
	elapsed := time.Since(start)
	stopProgress()
	if err != nil {
		return Result{}, err
	}
	if err := sys.Stop(ctx); err != nil {
		return Result{}, err
	}
	res := Result{Mode: "flood", Jobs: total, Elapsed: elapsed, JobsPerSec: rate(total, elapsed)}
	res.Extra = []string{fmt.Sprintf("fair=%t big=%d small=%d big_before_small_done=%d small_done_ms=%.1f",
		o.Fair, o.Jobs, o.Small, bigAtSmallDone.Load(), ms(time.Duration(smallDone.Load())))}
	return res, nil
}

// insertTenant enqueues n bench jobs of tenant with stamp, in batches.
func insertTenant(ctx context.Context, c *skiplock.Client, tenant string, n, batch int, stamp int64) error {
	opts := &skiplock.InsertOpts{Queue: Queue, Tenant: tenant}
	for done := 0; done < n; done += batch {
		jobs := make([]skiplock.InsertManyParams, min(batch, n-done))
		for i := range jobs {
			jobs[i] = skiplock.InsertManyParams{Args: noop{T: stamp}, Opts: opts}
		}
		if _, err := c.InsertMany(ctx, jobs); err != nil {
			return fmt.Errorf("insert tenant %s's jobs: %w", tenant, err)
		}
	}
	return nil
}

// spread is Skiplock whose inserts spread over tenants t0…tN-1 in turn
// (e2e --tenants).
type spread struct {
	*Skiplock
	tenants int
	next    atomic.Int64
}

func (s *spread) Insert(ctx context.Context, n int, _ time.Time) error {
	jobs := make([]skiplock.InsertManyParams, n)
	for i := range jobs {
		t := fmt.Sprintf("t%d", s.next.Add(1)%int64(s.tenants))
		jobs[i] = skiplock.InsertManyParams{Args: noop{}, Opts: &skiplock.InsertOpts{Queue: Queue, Tenant: t}}
	}
	_, err := s.client.InsertMany(ctx, jobs)
	return err
}

func (o Options) validateFair() error {
	switch {
	case o.Tenants < 0 || o.Tenants > 100_000:
		return fmt.Errorf("--tenants: must be between 1 and 100000, got %d", o.Tenants)
	case o.Tenants > 0 && (o.Mode != "e2e" || o.Procs > 0):
		return fmt.Errorf("--tenants applies to --mode e2e without --procs only")
	case o.Small < 0 || o.Small > 1_000_000:
		return fmt.Errorf("--small: must be between 1 and 1000000, got %d", o.Small)
	case o.Small > 0 && o.Mode != "flood":
		return fmt.Errorf("--small applies to --mode flood only")
	case o.Fair && (o.Procs > 0 || o.Mode == "http"):
		return fmt.Errorf("--fair applies to the bench's own process: not to --procs or --mode http")
	}
	return nil
}
