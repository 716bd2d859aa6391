package drivertest

import (
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
)

// count answers the n of queue, kind and state in cs (0 when absent).
func count(cs []driver.MetricsCount, queue, kind string, state driver.JobState) int64 {
	for _, c := range cs {
		if c.Queue == queue && c.Kind == kind && c.State == state {
			return c.N
		}
	}
	return 0
}

// Metrics count live jobs by queue, kind and state, those waiting to retry,
// jobs finished within the window by final state, and cluster counters.
var _ = add("JobMetrics", func(e *env) {
	e.insert(job("m.p"))
	e.claimID(e.insert(job("m.a")), "w1", time.Minute)
	retry := e.claimID(e.insert(job("m.b")), "w1", time.Minute)
	if _, err := outcome.FailJob(e.ctx, e.d, driver.FailParams{HeldJob: held(retry),
		Error: attemptError(retry, "again", true), Wait: time.Hour}); err != nil {
		e.t.Fatal(err)
	}
	e.complete(e.claimID(e.insert(job("m.c")), "w1", time.Minute), "")
	e.failFinal(e.claimID(e.insert(job("m.c")), "w1", time.Minute), "no")
	for _, n := range []int64{2, 3} {
		if err := e.metrics().CounterAdd(e.ctx, driver.CounterRescuedRequeued, n); err != nil {
			e.t.Fatal(err)
		}
	}
	m, err := e.metrics().JobMetrics(e.ctx, 5*time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		got  int64
		want int64
	}{
		{"live pending m.p", count(m.Live, "default", "m.p", driver.StatePending), 1},
		{"live running m.a", count(m.Live, "default", "m.a", driver.StateRunning), 1},
		{"live scheduled m.b", count(m.Live, "default", "m.b", driver.StateScheduled), 1},
		{"retry waiting m.b", count(m.RetryWaiting, "default", "m.b", driver.StateScheduled), 1},
		{"retry waiting m.p", count(m.RetryWaiting, "default", "m.p", driver.StatePending), 0},
		{"finished completed m.c", count(m.Finished, "default", "m.c", driver.StateCompleted), 1},
		{"finished failed m.c", count(m.Finished, "default", "m.c", driver.StateFailed), 1},
		{"live m.c", count(m.Live, "default", "m.c", driver.StatePending), 0},
		{"counter", m.Counters[driver.CounterRescuedRequeued], 5},
	} {
		if c.got != c.want {
			e.t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	m, err = e.metrics().JobMetrics(e.ctx, time.Nanosecond)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(m.Finished) != 0 {
		e.t.Errorf("finished within a nanosecond: %+v, want none", m.Finished)
	}
})
