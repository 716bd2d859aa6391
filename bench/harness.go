// Package bench measures a job queue: drain a backlog, insert and work at
// once (e2e), enqueue-to-start latency, and bulk insert. The harness runs
// against a System, so that Skiplock and its peers (bench/compare) are timed
// by the same code.
package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// System is a queue under test, working one queue of no-op jobs.
type System interface {
	Name() string
	// Insert enqueues n no-op jobs; a non-zero stamp goes in each payload
	// and comes back to onWork.
	Insert(ctx context.Context, n int, stamp time.Time) error
	// Start begins working; each worker calls onWork with its job's stamp
	// (unix nanoseconds, 0 when none).
	Start(ctx context.Context, onWork func(stamp int64)) error
	// Stop lets running jobs finish and stops working.
	Stop(ctx context.Context) error
	// Live counts the jobs of the bench queue not yet finished.
	Live(ctx context.Context) (int64, error)
}

// Result is what one run measured.
type Result struct {
	Mode       string
	Jobs       int64
	Elapsed    time.Duration
	JobsPerSec float64
	// P50, P95, P99 are enqueue→start latencies (latency mode).
	P50, P95, P99 time.Duration
	// Extra are further figures in order, "key=value" (scaling runs).
	Extra []string
}

// Line is the machine-readable summary printed last on stdout.
func (r Result) Line() string {
	s := fmt.Sprintf("result mode=%s jobs=%d jobs_per_sec=%.0f p50_ms=%.2f p95_ms=%.2f p99_ms=%.2f",
		r.Mode, r.Jobs, r.JobsPerSec, ms(r.P50), ms(r.P95), ms(r.P99))
	if len(r.Extra) > 0 {
		s += " " + strings.Join(r.Extra, " ")
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Harness times modes on a System.
type Harness struct {
	// Progress gets a live status line ("\r…"); nil keeps quiet.
	Progress io.Writer
	// Batch is how many jobs one insert carries (drain, e2e, insert).
	Batch int
	// Producers is how many goroutines insert at once (e2e, insert).
	Producers int
	// Outstanding bounds inserted-but-unworked jobs in e2e, so that the
	// run measures working, not an ever-growing table.
	Outstanding int
	// Window is the span of the first/last throughput figures of e2e.
	Window time.Duration
	// During, when set, runs beside latency's enqueues from their start;
	// latency waits for it and adds its figures, and the percentiles of
	// the jobs enqueued while it ran.
	During func(ctx context.Context) (figures string, err error)
	// Claims, when set, times the claims; with During, latency adds the
	// percentiles of the claims that took a job while it ran and after.
	Claims *claimTimer
}

func (h *Harness) defaults() {
	if h.Batch <= 0 {
		h.Batch = 1000
	}
	if h.Producers <= 0 {
		h.Producers = 1
	}
	if h.Outstanding <= 0 {
		h.Outstanding = 20 * h.Batch
	}
}

// Drain inserts jobs, then times working them all until none is live.
func (h *Harness) Drain(ctx context.Context, sys System, jobs int) (Result, error) {
	h.defaults()
	if err := h.insertAll(ctx, sys, jobs, h.Producers, "insert"); err != nil {
		return Result{}, err
	}
	var worked atomic.Int64
	start := time.Now()
	if err := sys.Start(ctx, func(int64) { worked.Add(1) }); err != nil {
		return Result{}, err
	}
	return h.finishDrain(ctx, sys, jobs, &worked, 0, start)
}

// IdleBeforeBurst is how long DrainAfterIdle's workers idle on the emptied
// table before the jobs arrive: long enough for several idle claims.
const IdleBeforeBurst = 3 * time.Second

// DrainAfterIdle times a burst on a queue that sat idle: the workers start
// and work one job, emptied is called (a vacuum of the emptied table, say),
// they idle for IdleBeforeBurst, and then jobs arrive at once; it answers
// the rate from the first insert until none is live.
func (h *Harness) DrainAfterIdle(ctx context.Context, sys System, jobs int, emptied func(context.Context) error) (Result, error) {
	h.defaults()
	var worked atomic.Int64
	if err := sys.Start(ctx, func(int64) { worked.Add(1) }); err != nil {
		return Result{}, err
	}
	if err := sys.Insert(ctx, 1, time.Time{}); err != nil {
		return Result{}, fmt.Errorf("insert: %w", err)
	}
	if err := waitDrained(ctx, sys, &worked, 1); err != nil {
		return Result{}, err
	}
	if emptied != nil {
		if err := emptied(ctx); err != nil {
			return Result{}, err
		}
	}
	if err := sleep(ctx, IdleBeforeBurst); err != nil {
		return Result{}, err
	}
	start := time.Now()
	if err := h.insertAll(ctx, sys, jobs, h.Producers, "insert"); err != nil {
		return Result{}, err
	}
	return h.finishDrain(ctx, sys, jobs, &worked, 1, start)
}

// finishDrain waits until jobs more than base are worked and none is live,
// and answers the rate since start.
func (h *Harness) finishDrain(ctx context.Context, sys System, jobs int, worked *atomic.Int64, base int64, start time.Time) (Result, error) {
	stopProgress := h.show(func() string {
		n := worked.Load() - base
		return fmt.Sprintf("%s drain %d/%d %.0f jobs/s", sys.Name(), n, jobs, rate(n, time.Since(start)))
	})
	err := waitDrained(ctx, sys, worked, base+int64(jobs))
	elapsed := time.Since(start)
	stopProgress()
	if err != nil {
		return Result{}, err
	}
	if err := sys.Stop(ctx); err != nil {
		return Result{}, err
	}
	return Result{Mode: "drain", Jobs: int64(jobs), Elapsed: elapsed, JobsPerSec: rate(int64(jobs), elapsed)}, nil
}

// waitDrained waits until n jobs are worked and none is live (worked is not
// finished: the completions must commit).
func waitDrained(ctx context.Context, sys System, worked *atomic.Int64, n int64) error {
	for worked.Load() < n {
		if err := sleep(ctx, 2*time.Millisecond); err != nil {
			return err
		}
	}
	for {
		live, err := sys.Live(ctx)
		if err != nil || live == 0 {
			return err
		}
		if err := sleep(ctx, 2*time.Millisecond); err != nil {
			return err
		}
	}
}

// Insert times bulk inserts of jobs.
func (h *Harness) Insert(ctx context.Context, sys System, jobs int) (Result, error) {
	h.defaults()
	start := time.Now()
	if err := h.insertAll(ctx, sys, jobs, h.Producers, "insert"); err != nil {
		return Result{}, err
	}
	elapsed := time.Since(start)
	return Result{Mode: "insert", Jobs: int64(jobs), Elapsed: elapsed, JobsPerSec: rate(int64(jobs), elapsed)}, nil
}

func (h *Harness) insertAll(ctx context.Context, sys System, jobs, producers int, what string) error {
	var next, done atomic.Int64
	start := time.Now()
	stopProgress := h.show(func() string {
		n := done.Load()
		return fmt.Sprintf("%s %s %d/%d %.0f jobs/s", sys.Name(), what, n, jobs, rate(n, time.Since(start)))
	})
	defer stopProgress()
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for range producers {
		wg.Go(func() {
			for {
				end := next.Add(int64(h.Batch))
				n := min(int64(h.Batch), int64(jobs)-(end-int64(h.Batch)))
				if n <= 0 {
					return
				}
				if err := sys.Insert(ctx, int(n), time.Time{}); err != nil {
					errs <- fmt.Errorf("%s: %w", what, err)
					return
				}
				done.Add(n)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// E2E inserts and works at once for d and answers the sustained rate of
// worked jobs, with the first and last Window's rates.
func (h *Harness) E2E(ctx context.Context, sys System, d time.Duration) (Result, error) {
	h.defaults()
	var inserted, worked atomic.Int64
	if err := sys.Start(ctx, func(int64) { worked.Add(1) }); err != nil {
		return Result{}, err
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, h.Producers)
	for range h.Producers {
		wg.Go(func() {
			for runCtx.Err() == nil {
				if inserted.Load()-worked.Load() > int64(h.Outstanding) {
					_ = sleep(runCtx, time.Millisecond)
					continue
				}
				if err := sys.Insert(runCtx, h.Batch, time.Time{}); err != nil {
					if runCtx.Err() == nil {
						errs <- err
						stop()
					}
					return
				}
				inserted.Add(int64(h.Batch))
			}
		})
	}
	start := time.Now()
	base := worked.Load()
	// One sample a second, for the first and last windows.
	samples := []int64{base}
	stopProgress := h.show(func() string {
		n := worked.Load() - base
		return fmt.Sprintf("%s e2e %s/%s worked %d %.0f jobs/s", sys.Name(),
			time.Since(start).Truncate(time.Second), d, n, rate(n, time.Since(start)))
	})
	tick := time.NewTicker(time.Second)
	deadline := time.NewTimer(d)
loop:
	for {
		select {
		case <-tick.C:
			samples = append(samples, worked.Load())
		case <-deadline.C:
			break loop
		case <-runCtx.Done():
			break loop
		}
	}
	tick.Stop()
	end := worked.Load()
	elapsed := time.Since(start)
	stopProgress()
	stop()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return Result{}, fmt.Errorf("insert: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := sys.Stop(context.WithoutCancel(ctx)); err != nil {
		return Result{}, err
	}
	n := end - base
	res := Result{Mode: "e2e", Jobs: n, Elapsed: elapsed, JobsPerSec: rate(n, elapsed)}
	if w := int(h.Window / time.Second); w > 0 && len(samples) > 2*w {
		first := rate(samples[w]-samples[0], time.Duration(w)*time.Second)
		last := rate(samples[len(samples)-1]-samples[len(samples)-1-w], time.Duration(w)*time.Second)
		res.Extra = append(res.Extra, fmt.Sprintf("window_s=%d first_jobs_per_sec=%.0f last_jobs_per_sec=%.0f", w, first, last))
	}
	return res, nil
}

// paced calls do once for each slot of an offer of perSec a second from
// start for d, at the slot's due time, one call at a time; it answers the
// first error of do or of ctx.
func paced(ctx context.Context, start time.Time, perSec float64, d time.Duration, do func(due time.Time) error) error {
	interval := time.Duration(float64(time.Second) / perSec)
	for i := int64(0); ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(start) >= d {
			return nil
		}
		if err := sleep(ctx, time.Until(at)); err != nil {
			return err
		}
		if err := do(at); err != nil {
			return err
		}
	}
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1)+0.5)]
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// show redraws status() on Progress five times a second until the returned
// func is called, which clears the line.
func (h *Harness) show(status func() string) func() {
	if h.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(h.Progress, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprint(h.Progress, "\r\033[K"+status())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
