package drivertest

import (
	"time"

	"github.com/skiplock/skiplock/driver"
)

var _ = add("Activity", func(e *env) {
	since := time.Now().Add(-time.Minute)
	a, b, c := e.insert(job("a")), e.insert(job("b")), e.insert(job("c"))
	e.complete(e.claimID(a, "w1", lease), "")
	e.failFinal(e.claimID(b, "w1", lease), "boom")
	e.claimID(c, "w2", lease)
	act, err := e.stats().JobActivity(e.ctx, since, time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	got := map[driver.JobState]int64{}
	for _, n := range act.Finished {
		if n.Bucket != 0 && n.Bucket != 1 {
			e.t.Fatalf("bucket %d of a job finished within the first minute", n.Bucket)
		}
		got[n.State] += n.N
	}
	if got[driver.StateCompleted] != 1 || got[driver.StateFailed] != 1 || act.Running != 1 || act.RunningWorkers != 1 {
		e.t.Fatalf("activity %+v (finished %v)", act, got)
	}
	later, err := e.stats().JobActivity(e.ctx, time.Now().Add(time.Hour), time.Minute)
	if err != nil || len(later.Finished) != 0 {
		e.t.Fatalf("activity since an hour ahead: %+v, %v", later, err)
	}
})
