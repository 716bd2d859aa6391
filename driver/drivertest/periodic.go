package drivertest

import "time"

// The last tick of a periodic job only moves forward, and survives.
var _ = add("PeriodicLastTickOnlyMovesForward", func(e *env) {
	t1 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	for _, tick := range []time.Time{t1, t2, t1} {
		if err := e.periodic().PeriodicAdvance(e.ctx, "nightly", tick); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := e.periodic().PeriodicAdvance(e.ctx, "hourly", t1); err != nil {
		e.t.Fatal(err)
	}
	ticks, err := e.periodic().PeriodicLastTicks(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(ticks) != 2 || !ticks["nightly"].Equal(t2) || !ticks["hourly"].Equal(t1) {
		e.t.Fatalf("ticks %v, want nightly %s and hourly %s", ticks, t2, t1)
	}
})
