package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// SteadyProbe samples the database during a steady run.
type SteadyProbe struct {
	// DeadTuples answers the hot table's dead tuples now; nil samples
	// nothing (SQLite).
	DeadTuples func(ctx context.Context) (int64, error)
	// Every is the sampling interval (default a second).
	Every time.Duration
}

// steadyInserters is how many inserts may be under way at once: enough
// that a slow commit does not hold the next insert back (open loop). An
// inserter takes every job already due, up to steadyBatch, in one insert
// stamped with the earliest's due time: at 200 a second each job is its
// own insert, at 10,000 a second the offer is not held to what one-job
// inserts can reach.
const (
	steadyInserters = 64
	steadyBatch     = 100
)

// Steady offers perSec jobs a second for d, the jobs due at once in one
// insert, on a schedule that does not wait for the queue (open loop): a
// job is due at start + i/perSec and its latency counts from the earliest
// due time of its insert, so that a stalled insert or claim shows in the
// tail instead of slowing the offer. It answers the due → start
// percentiles, the rate the inserts achieved (below perSec when they could
// not keep up with the offer) and the probe's dead tuples (median and max).
func (h *Harness) Steady(ctx context.Context, sys System, perSec float64, d time.Duration, probe SteadyProbe) (Result, error) {
	h.defaults()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, int(perSec*d.Seconds())+1)
	var worked atomic.Int64
	err := sys.Start(ctx, func(stamp int64) {
		now := time.Now().UnixNano()
		if stamp > 0 {
			mu.Lock()
			lat = append(lat, time.Duration(now-stamp))
			mu.Unlock()
		}
		worked.Add(1)
	})
	if err != nil {
		return Result{}, err
	}
	if err := sleep(ctx, 500*time.Millisecond); err != nil {
		return Result{}, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	due := make(chan time.Time, steadyInserters*4)
	var wg sync.WaitGroup
	var insertErr atomic.Pointer[error]
	for range steadyInserters {
		wg.Go(func() {
			for at := range due {
				n := 1
			more:
				for n < steadyBatch {
					select {
					case _, ok := <-due:
						if !ok {
							break more
						}
						n++
					default:
						break more
					}
				}
				if err := sys.Insert(runCtx, n, at); err != nil && runCtx.Err() == nil {
					insertErr.CompareAndSwap(nil, &err)
					cancel()
				}
			}
		})
	}
	var dead []int64
	var deadErr error
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		dead, deadErr = sample(runCtx, probe)
	}()
	start := time.Now()
	stopProgress := h.show(func() string {
		return fmt.Sprintf("%s steady %s/%s offered %.0f/s worked %d", sys.Name(),
			time.Since(start).Truncate(time.Second), d, perSec, worked.Load())
	})
	var sent int64
	// An insert's error or ctx's ends the offer; both are answered below.
	_ = paced(runCtx, start, perSec, d, func(at time.Time) error {
		select {
		case due <- at:
			sent++
			return nil
		case <-runCtx.Done():
			return runCtx.Err()
		}
	})
	close(due)
	wg.Wait()
	// Inserts that could not keep up ran past d: the rate is what the
	// database took, not what was offered.
	elapsed := max(d, time.Since(start))
	waitUntil := time.Now().Add(30 * time.Second)
	for worked.Load() < sent && time.Now().Before(waitUntil) && ctx.Err() == nil {
		_ = sleep(ctx, time.Millisecond)
	}
	cancel()
	<-sampled
	stopProgress()
	if p := insertErr.Load(); p != nil {
		return Result{}, fmt.Errorf("insert: %w", *p)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if deadErr != nil {
		return Result{}, fmt.Errorf("sample dead tuples: %w", deadErr)
	}
	if err := sys.Stop(context.WithoutCancel(ctx)); err != nil {
		return Result{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if int64(len(lat)) < sent {
		return Result{}, fmt.Errorf("steady: %d of %d jobs started within 30 s of the last insert", len(lat), sent)
	}
	slices.Sort(lat)
	res := Result{Mode: "steady", Jobs: sent, Elapsed: elapsed, JobsPerSec: rate(sent, elapsed),
		P50: percentile(lat, 0.50), P95: percentile(lat, 0.95), P99: percentile(lat, 0.99)}
	if probe.DeadTuples != nil {
		slices.Sort(dead)
		res.Extra = append(res.Extra, fmt.Sprintf("dead_tuples_median=%d dead_tuples_max=%d", median(dead), last(dead)))
	}
	return res, nil
}

// sample calls probe.DeadTuples every probe.Every until ctx ends.
func sample(ctx context.Context, probe SteadyProbe) ([]int64, error) {
	if probe.DeadTuples == nil {
		return nil, nil
	}
	every := probe.Every
	if every <= 0 {
		every = time.Second
	}
	var out []int64
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out, nil
		case <-t.C:
			n, err := probe.DeadTuples(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return out, nil
				}
				return out, err
			}
			out = append(out, n)
		}
	}
}

func median(sorted []int64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[len(sorted)/2]
}

func last(sorted []int64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[len(sorted)-1]
}
