package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Rescuer returns running jobs whose lease expired: back to pending at once
// (an attempt spent), failed when none is left.
//
// A pass looks only at leases that expired since the previous pass (less
// rescueMargin). The first pass looks at all, and so does a pass once
// fullRescueEvery passes and 20 times the last full pass's duration have
// gone by. A finished job leaves an entry in the lease index until vacuum,
// and a long transaction elsewhere holds vacuum off: a pass over every
// expired lease would walk millions of them each time. What a bounded pass
// can miss (a row another statement had locked when its lease expired) the
// next full pass finds.
type Rescuer struct {
	Store    driver.JobStore
	Interval time.Duration
	Limit    int
	// OnRequeue wakes workers when jobs went back to pending.
	OnRequeue func()
	Logger    *slog.Logger

	since     time.Time // leases that expired before this were looked at
	passes    int       // since the last full pass
	lastFull  time.Time
	fullCost  time.Duration
	doneFirst bool
}

const (
	fullRescueEvery = 30
	rescueMargin    = 10 * time.Second
)

// RunOnce rescues until no expired lease is left.
func (r *Rescuer) RunOnce(ctx context.Context) error {
	limit := r.Limit
	if limit <= 0 {
		limit = 1000
	}
	since := r.since
	full := !r.doneFirst || r.passes >= fullRescueEvery && time.Since(r.lastFull) >= 20*r.fullCost
	if full {
		since = time.Time{}
	}
	start := time.Now()
	for {
		res, err := r.Store.JobRescue(ctx, limit, since)
		if err != nil {
			return err
		}
		if res.Requeued+res.Failed+res.Cancelled > 0 {
			orLogger(r.Logger).Info("rescued jobs with expired leases", "requeued", res.Requeued,
				"failed", res.Failed, "cancelled", res.Cancelled)
		}
		if res.Requeued > 0 && r.OnRequeue != nil {
			r.OnRequeue()
		}
		if res.Requeued+res.Failed+res.Cancelled < limit {
			r.since, r.passes, r.doneFirst = res.Now.Add(-rescueMargin), r.passes+1, true
			if full {
				r.passes, r.lastFull, r.fullCost = 0, time.Now(), time.Since(start)
			}
			return nil
		}
	}
}

// Run rescues every Interval until ctx ends.
func (r *Rescuer) Run(ctx context.Context) {
	runEvery(ctx, "rescuer", r.Interval, orLogger(r.Logger), r.RunOnce)
}
