package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Latency enqueues one job at a time at rate per second for d with idle
// workers, and answers the enqueue→start percentiles.
func (h *Harness) Latency(ctx context.Context, sys System, perSec float64, d time.Duration) (Result, error) {
	return h.latency(ctx, sys, "latency", perSec, d, func(ctx context.Context) (int64, []string, error) {
		p, err := Produce(ctx, func(ctx context.Context, stamp time.Time) error {
			return sys.Insert(ctx, 1, stamp)
		}, perSec, d)
		if err != nil {
			return 0, nil, err
		}
		return p.Sent, []string{p.Figures()}, nil
	})
}

// LatencyFrom times jobs that produce enqueues from elsewhere (another
// process) at perSec a second for d, each stamped with its insert time,
// while sys's workers, idle at first, take them: the enqueue→start
// percentiles under mode's name. produce answers the jobs it sent and its
// own figures.
func (h *Harness) LatencyFrom(ctx context.Context, sys System, mode string, perSec float64, d time.Duration,
	produce func(ctx context.Context) (sent int64, figures string, err error)) (Result, error) {
	return h.latency(ctx, sys, mode, perSec, d, func(ctx context.Context) (int64, []string, error) {
		sent, figures, err := produce(ctx)
		return sent, []string{figures}, err
	})
}

func (h *Harness) latency(ctx context.Context, sys System, mode string, perSec float64, d time.Duration,
	send func(ctx context.Context) (int64, []string, error)) (Result, error) {
	h.defaults()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, int(perSec*d.Seconds())+1)
	stamps := make([]int64, 0, cap(lat)) // enqueue times of lat, for During
	var worked atomic.Int64
	err := sys.Start(ctx, func(stamp int64) {
		now := time.Now().UnixNano()
		if stamp > 0 {
			mu.Lock()
			lat = append(lat, time.Duration(now-stamp))
			stamps = append(stamps, stamp)
			mu.Unlock()
		}
		worked.Add(1)
	})
	if err != nil {
		return Result{}, err
	}
	// Let the workers settle into idle before the first job.
	if err := sleep(ctx, 500*time.Millisecond); err != nil {
		return Result{}, err
	}
	start := time.Now()
	during := h.startDuring(ctx)
	stopProgress := h.show(func() string {
		return fmt.Sprintf("%s %s %s/%s worked %d", sys.Name(), mode, time.Since(start).Truncate(time.Second), d, worked.Load())
	})
	sent, figures, err := send(ctx)
	if err != nil {
		stopProgress()
		return Result{}, err
	}
	waitUntil := time.Now().Add(10 * time.Second)
	for worked.Load() < sent && time.Now().Before(waitUntil) {
		_ = sleep(ctx, time.Millisecond)
	}
	stopProgress()
	if err := sys.Stop(context.WithoutCancel(ctx)); err != nil {
		return Result{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if int64(len(lat)) < sent {
		return Result{}, fmt.Errorf("%s: %d of %d jobs started within 10 s of the last insert", mode, len(lat), sent)
	}
	extra, err := during.figures(ctx, lat, stamps, h.Claims)
	if err != nil {
		return Result{}, err
	}
	slices.Sort(lat)
	return Result{Mode: mode, Jobs: sent, Elapsed: d, JobsPerSec: rate(sent, d),
		P50: percentile(lat, 0.50), P95: percentile(lat, 0.95), P99: percentile(lat, 0.99),
		Extra: append(figures, extra...)}, nil
}

// runLatencyFrom is latency-remote and latency-http: a producer process
// enqueues, through the library into the database or through POST /v1/jobs
// of a server process that works nothing, while this process's workers
// take the jobs.
func runLatencyFrom(ctx context.Context, o Options, db *Database, sys *Skiplock, h *Harness) (Result, error) {
	if o.Exe == "" {
		return Result{}, fmt.Errorf("--mode %s runs the skiplock binary: Options.Exe is not set", o.Mode)
	}
	if o.Mode == "latency-http" {
		return LatencyHTTP(ctx, o.Exe, db.URL, sys, h, o.Rate, o.Duration)
	}
	args := []string{"--rate", strconv.FormatFloat(o.Rate, 'g', -1, 64), "--duration", o.Duration.String(),
		"--database-url", db.URL}
	return h.LatencyFrom(ctx, sys, o.Mode, o.Rate, o.Duration, func(ctx context.Context) (int64, string, error) {
		return runProducer(ctx, o.Exe, args)
	})
}

// LatencyHTTP is latency-http: exe, a skiplock binary, serves the database
// at dbURL (working nothing), a producer process of exe enqueues through
// its POST /v1/jobs at rate for d, and sys's workers take the jobs.
func LatencyHTTP(ctx context.Context, exe, dbURL string, sys *Skiplock, h *Harness, rate float64, d time.Duration) (Result, error) {
	s, err := startServer(ctx, exe, dbURL, nil)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = s.stop() }()
	args := []string{"--rate", strconv.FormatFloat(rate, 'g', -1, 64), "--duration", d.String(), "--server", s.URL}
	return h.LatencyFrom(ctx, sys, "latency-http", rate, d, func(ctx context.Context) (int64, string, error) {
		return runProducer(ctx, exe, args)
	})
}
