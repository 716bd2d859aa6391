package drivertest

import (
	"time"

	"github.com/skiplock/skiplock/driver"
)

// windowJob is a job whose key holds for window.
func windowJob(kind, key string, window time.Duration) *driver.InsertParams {
	p := job(kind)
	p.IdempotencyKey, p.UniquePolicy, p.UniqueWindow = key, "window", window
	return p
}

// finished inserts a window-keyed job and completes it.
func (e *env) finished(key string, window time.Duration) {
	e.t.Helper()
	j := e.claimID(e.insert(windowJob("k-"+key, key, window)), "w1", time.Minute)
	if _, err := e.d.JobCompleteMany(e.ctx, []driver.CompleteParams{{HeldJob: held(j)}}); err != nil {
		e.t.Fatal(err)
	}
}

// The prune deletes, in batches, the expired keys of finished jobs only: a
// live job's key and a key inside its window stay and keep deduplicating.
var _ = add("UniqueKeyPrune", func(e *env) {
	e.insert(windowJob("live", "live", time.Millisecond))
	e.finished("old1", time.Millisecond)
	e.finished("old2", time.Millisecond)
	e.finished("new", time.Hour)
	before := time.Now().Add(time.Second) // past the millisecond windows, inside the hour
	for i, want := range []int{1, 1, 0} {
		if n, err := e.archive().UniqueKeyPrune(e.ctx, before, 1); err != nil || n != want {
			e.t.Fatalf("prune %d: %d keys, %v; want %d", i, n, err, want)
		}
	}
	for key, dup := range map[string]bool{"live": true, "new": true, "old1": false, "old2": false} {
		res := e.insertMany(windowJob("again", key, time.Hour))
		if res[0].Duplicate != dup {
			e.t.Fatalf("insert with key %q after the prune: duplicate %v, want %v", key, res[0].Duplicate, dup)
		}
	}
})
