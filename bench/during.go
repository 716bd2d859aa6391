package bench

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// duringRun is a Harness.During running beside the latency enqueues.
type duringRun struct {
	start, end time.Time
	line       string
	err        error
	done       chan struct{}
}

// startDuring starts h.During, if any.
func (h *Harness) startDuring(ctx context.Context) *duringRun {
	if h.During == nil {
		return nil
	}
	r := &duringRun{start: time.Now(), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.line, r.err = h.During(ctx)
		r.end = time.Now()
	}()
	return r
}

// figures waits for the run and answers its figures, the latency
// percentiles of the jobs enqueued while it ran and after, and, with
// claims, those of the claims that took a job while it ran and after.
func (r *duringRun) figures(ctx context.Context, lat []time.Duration, stamps []int64, claims *claimTimer) ([]string, error) {
	if r == nil {
		return nil, nil
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	// The jobs enqueued after the run are the same run's figures without
	// it: the machine's load at the time weighs on both alike.
	var inside, after []time.Duration
	for i, st := range stamps {
		switch {
		case st >= r.start.UnixNano() && st <= r.end.UnixNano():
			inside = append(inside, lat[i])
		case st > r.end.UnixNano():
			after = append(after, lat[i])
		}
	}
	slices.Sort(inside)
	slices.Sort(after)
	out := []string{r.line, percentiles("during_jobs", "during", inside), percentiles("after_jobs", "after", after)}
	if claims != nil {
		out = append(out, percentiles("during_claims", "during_claim", claims.tookBetween(r.start.UnixNano(), r.end.UnixNano())),
			percentiles("after_claims", "after_claim", claims.tookBetween(r.end.UnixNano()+1, 0)))
	}
	return out, nil
}

// percentiles is a count and the p50, p95 and p99 of sorted durations, as
// "count=N prefix_p50_ms=… prefix_p95_ms=… prefix_p99_ms=…".
func percentiles(count, prefix string, sorted []time.Duration) string {
	return fmt.Sprintf("%s=%d %s_p50_ms=%.2f %s_p95_ms=%.2f %s_p99_ms=%.2f", count, len(sorted),
		prefix, ms(percentile(sorted, 0.50)), prefix, ms(percentile(sorted, 0.95)), prefix, ms(percentile(sorted, 0.99)))
}
