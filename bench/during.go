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

// figures waits for the run and answers its figures and the latency
// percentiles of the jobs enqueued while it ran.
func (r *duringRun) figures(ctx context.Context, lat []time.Duration, stamps []int64) ([]string, error) {
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
	return []string{r.line, fmt.Sprintf("during_jobs=%d during_p50_ms=%.2f during_p95_ms=%.2f during_p99_ms=%.2f",
		len(inside), ms(percentile(inside, 0.50)), ms(percentile(inside, 0.95)), ms(percentile(inside, 0.99))),
		fmt.Sprintf("after_jobs=%d after_p50_ms=%.2f after_p95_ms=%.2f after_p99_ms=%.2f",
			len(after), ms(percentile(after, 0.50)), ms(percentile(after, 0.95)), ms(percentile(after, 0.99)))}, nil
}
