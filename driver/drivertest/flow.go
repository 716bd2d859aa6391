package drivertest

import (
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
)

// flowJob is a job counting against concurrency key ck (limit k) and, when
// rate > 0, rate key rk with that rate a second and burst.
func flowJob(ck string, k int, rk string, rate, burst float64) *driver.InsertParams {
	p := job("f")
	p.Flow = &driver.FlowKeys{ConcurrencyKey: ck, ConcurrencyLimit: k, RateKey: rk, Rate: rate, Burst: burst}
	return p
}

// A flow claim starts at most K jobs of a concurrency key; a job leaving
// running, whichever way, frees its slot; a held-back job stays pending
// with its attempt unspent; a plain claim reads no key.
var _ = add("FlowConcurrencyKey", func(e *env) {
	a1 := e.insert(flowJob("h\x1fa", 1, "", 0, 0))
	a2 := e.insert(flowJob("h\x1fa", 1, "", 0, 0))
	b1 := e.insert(flowJob("h\x1fb", 2, "", 0, 0))
	b2 := e.insert(flowJob("h\x1fb", 2, "", 0, 0))
	b3 := e.insert(flowJob("h\x1fb", 2, "", 0, 0))
	got := e.claim(driver.ClaimParams{Flow: true})
	e.wantIDs(got, a1.ID, b1.ID, b2.ID)
	if more := e.claim(driver.ClaimParams{Flow: true}); len(more) != 0 {
		e.t.Fatalf("claimed %v over the limits", ids(more))
	}
	if j := e.get(a2.ID); j.State != driver.StatePending || j.Attempt != 0 {
		e.t.Fatalf("held-back job: %s attempt %d", j.State, j.Attempt)
	}
	e.complete(got[0], "") // a1 completes: a2 may start
	// b1 is snoozed: running → scheduled now, its slot freed.
	if _, err := outcome.SnoozeJob(e.ctx, e.d, driver.SnoozeParams{HeldJob: held(got[1]), RunAt: time.Now()}); err != nil {
		e.t.Fatalf("snooze: %v", err)
	}
	next := e.claim(driver.ClaimParams{Flow: true})
	if len(next) != 2 {
		e.t.Fatalf("after a completion and a snooze: claimed %v, want a2 and one of b", ids(next))
	}
	for _, j := range next {
		if j.ID != a2.ID && j.ID != b3.ID && j.ID != b1.ID {
			e.t.Fatalf("claimed %d", j.ID)
		}
	}
	if more := e.claim(driver.ClaimParams{Flow: true}); len(more) != 0 {
		e.t.Fatalf("claimed %v over the limits", ids(more))
	}
})

// A rate key's bucket starts full with burst tokens; each start spends one.
var _ = add("FlowRateKey", func(e *env) {
	for range 4 {
		e.insert(flowJob("", 0, "r\x1fx", 1.0/3600, 2))
	}
	if got := e.claim(driver.ClaimParams{Flow: true}); len(got) != 2 {
		e.t.Fatalf("claimed %v, want the burst of 2", ids(got))
	}
	if got := e.claim(driver.ClaimParams{Flow: true}); len(got) != 0 {
		e.t.Fatalf("claimed %v with an empty bucket", ids(got))
	}
	store, err := driver.As[driver.FlowStore](e.d)
	if err != nil {
		e.t.Fatal(err)
	}
	use, err := store.FlowUsage(e.ctx)
	if err != nil || len(use) != 1 || !use[0].Rated || use[0].Tokens >= 1 || use[0].Burst != 2 {
		e.t.Fatalf("usage: %+v %v", use, err)
	}
})

// A claim asked to be both limited and fair is limited: the limits hold.
var _ = add("FlowWinsOverFair", func(e *env) {
	a1 := e.insert(flowJob("h\x1fa", 1, "", 0, 0))
	e.insert(flowJob("h\x1fa", 1, "", 0, 0))
	got := e.claim(driver.ClaimParams{Flow: true, Fair: &driver.FairShare{}})
	e.wantIDs(got, a1.ID)
	if more := e.claim(driver.ClaimParams{Flow: true, Fair: &driver.FairShare{}}); len(more) != 0 {
		e.t.Fatalf("claimed %v over the limit", ids(more))
	}
})
