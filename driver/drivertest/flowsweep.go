package drivertest

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// sweep runs one FlowSweep from the first key, judged by before.
func (e *env) sweep(before time.Time, limit int) driver.FlowSwept {
	e.t.Helper()
	got, err := e.flow().FlowSweep(e.ctx, driver.FlowSweepParams{Before: before, Limit: limit})
	if err != nil {
		e.t.Fatalf("FlowSweep: %v", err)
	}
	return got
}

// flowKeys answers the keys that have slots or a bucket, in order.
func (e *env) flowKeys() []string {
	e.t.Helper()
	use, err := e.flow().FlowUsage(e.ctx)
	if err != nil {
		e.t.Fatalf("FlowUsage: %v", err)
	}
	var keys []string
	for _, u := range use {
		keys = append(keys, u.Key)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// runOnce inserts p, starts and completes it.
func (e *env) runOnce(p *driver.InsertParams) {
	e.t.Helper()
	j := e.insert(p)
	got := e.claim(driver.ClaimParams{Flow: true, Max: 1})
	e.wantIDs(got, j.ID)
	e.complete(got[0], "")
}

// A key whose jobs have all finished is dropped, slots or bucket, once
// none of them started after the sweep's before; it comes back full with
// its next job.
var _ = add("FlowSweepDropsIdleKeys", func(e *env) {
	slots, bucket := flowJob("c\x1fa", 1, "", 0, 0), flowJob("", 0, "r\x1fa", 1e9, 1)
	e.runOnce(slots)
	e.runOnce(bucket)
	if got := e.sweep(time.Now().Add(-time.Hour), 10); got.Read != 2 || got.Dropped != 0 {
		e.t.Fatalf("sweep of keys whose jobs started within the hour: %+v, want them read and kept", got)
	}
	if got := e.sweep(time.Now().Add(time.Hour), 10); got.Read != 2 || got.Last != "r\x1fa" || got.Dropped != 2 {
		e.t.Fatalf("sweep of idle keys: %+v, want them dropped", got)
	}
	if keys := e.flowKeys(); len(keys) != 0 {
		e.t.Fatalf("keys after the sweep: %q", keys)
	}
	e.runOnce(slots)
	e.runOnce(bucket)
})

// A key that a live job carries stays, whatever the job's state and
// whichever of its keys it is; so does a key whose bucket is not full.
var _ = add("FlowSweepKeepsKeysInUse", func(e *env) {
	running := e.insert(flowJob("c\x1frunning", 1, "", 0, 0))
	e.wantIDs(e.claim(driver.ClaimParams{Flow: true}), running.ID)
	// A rate of one an hour: the bucket stays short of full.
	slow := e.insert(flowJob("", 0, "r\x1fslow", 1.0/3600, 1))
	got := e.claim(driver.ClaimParams{Flow: true})
	e.wantIDs(got, slow.ID)
	e.complete(got[0], "")
	e.insert(flowJob("c\x1fpending", 1, "", 0, 0))
	e.insert(flowJob("", 0, "r\x1fpending", 1e9, 1))
	scheduled := flowJob("c\x1fscheduled", 1, "r\x1fscheduled", 1e9, 1)
	scheduled.RunAt = time.Now().Add(time.Hour)
	e.insert(scheduled)
	paused := flowJob("c\x1fpaused", 1, "", 0, 0)
	paused.Paused = true
	e.insert(paused)
	want := e.flowKeys()
	if got := e.sweep(time.Now().Add(time.Hour), 100); got.Read != len(want) || got.Dropped != 0 {
		e.t.Fatalf("sweep: %+v, want %d keys read and none dropped", got, len(want))
	}
	if keys := e.flowKeys(); !slices.Equal(keys, want) {
		e.t.Fatalf("keys after the sweep: %q, want %q", keys, want)
	}
})

// A sweep reads at most its limit of keys, in order, from after After; a
// short read says the keys ran out.
var _ = add("FlowSweepInBatches", func(e *env) {
	for _, k := range []string{"b\x1f1", "b\x1f2", "b\x1f3"} {
		e.runOnce(flowJob(k, 1, k, 1e9, 1))
	}
	before := time.Now().Add(time.Hour)
	first, err := e.flow().FlowSweep(e.ctx, driver.FlowSweepParams{Before: before, Limit: 2})
	if err != nil || first.Read != 2 || first.Last != "b\x1f2" || first.Dropped != 2 {
		e.t.Fatalf("first batch: %+v, %v", first, err)
	}
	next, err := e.flow().FlowSweep(e.ctx, driver.FlowSweepParams{After: first.Last, Before: before, Limit: 2})
	if err != nil || next.Read != 1 || next.Last != "b\x1f3" || next.Dropped != 1 {
		e.t.Fatalf("second batch: %+v, %v", next, err)
	}
	if keys := e.flowKeys(); len(keys) != 0 {
		e.t.Fatalf("keys after the sweep: %q", keys)
	}
})
