package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Rescuer returns running jobs whose lease expired: back to pending at once
// (an attempt spent), failed when none is left. A pass looks back only to
// the previous one (see lookback).
type Rescuer struct {
	Store    driver.JobStore
	Interval time.Duration
	Limit    int
	// OnRequeue wakes workers when jobs went back to pending.
	OnRequeue func()
	// Counters, when set, keeps the cluster-wide rescue counts that
	// metrics show.
	Counters driver.MetricsStore
	Logger   *slog.Logger

	lookback lookback
}

// RunOnce rescues until no expired lease is left.
func (r *Rescuer) RunOnce(ctx context.Context) error {
	limit := r.Limit
	if limit <= 0 {
		limit = 1000
	}
	return r.lookback.run(limit, func(since time.Time) (int, time.Time, error) {
		res, err := r.Store.JobRescue(ctx, limit, since)
		if err != nil {
			return 0, time.Time{}, err
		}
		n := res.Requeued + res.Failed + res.Cancelled
		if n > 0 {
			orLogger(r.Logger).Info("rescued jobs with expired leases", "requeued", res.Requeued,
				"failed", res.Failed, "cancelled", res.Cancelled)
		}
		r.count(ctx, res)
		if res.Requeued > 0 && r.OnRequeue != nil {
			r.OnRequeue()
		}
		return n, res.Now, nil
	})
}

// Run rescues every Interval until ctx ends.
func (r *Rescuer) Run(ctx context.Context) {
	runEvery(ctx, "rescuer", r.Interval, orLogger(r.Logger), r.RunOnce)
}

// count adds a pass's rescues to the cluster-wide counters; a failure only
// costs a metric, so it is logged.
func (r *Rescuer) count(ctx context.Context, res driver.RescueResult) {
	if r.Counters == nil {
		return
	}
	for name, n := range map[string]int{driver.CounterRescuedRequeued: res.Requeued,
		driver.CounterRescuedFailed: res.Failed, driver.CounterRescuedCancelled: res.Cancelled} {
		if n == 0 {
			continue
		}
		if err := r.Counters.CounterAdd(ctx, name, int64(n)); err != nil {
			orLogger(r.Logger).Warn("counting rescued jobs", "counter", name, "err", err)
		}
	}
}
