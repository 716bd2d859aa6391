package sqlitedriver

import (
	"context"
	"database/sql"
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) JobMetrics(ctx context.Context, window time.Duration) (*driver.Metrics, error) {
	m := &driver.Metrics{Counters: map[string]int64{}, Paused: map[string]bool{}}
	type setting struct {
		name   string
		paused bool
	}
	settings, err := collect(func(s scanner) (setting, error) {
		var st setting
		return st, s.Scan(&st.name, &st.paused)
	})(e.rquery(ctx, "QueueSettings"))
	if err != nil {
		return nil, err
	}
	for _, st := range settings {
		m.Paused[st.name] = st.paused
	}
	now, nowArg, _ := nowArgs()
	type live struct {
		c     driver.MetricsCount
		retry int64
		age   storedMicros
	}
	lives, err := collect(func(s scanner) (live, error) {
		var l live
		return l, s.Scan(&l.c.Queue, &l.c.Kind, &l.c.State, &l.c.N, &l.retry, &l.age)
	})(e.rquery(ctx, "JobMetricsLive", nowArg))
	if err != nil {
		return nil, err
	}
	for _, l := range lives {
		if age := l.age.duration(); l.c.State == driver.StatePending && age > 0 {
			l.c.OldestPendingAge = age
		}
		m.Live = append(m.Live, l.c)
		if l.retry > 0 {
			c := l.c
			c.N, c.OldestPendingAge = l.retry, 0
			m.RetryWaiting = append(m.RetryWaiting, c)
		}
	}
	m.Finished, err = collect(func(s scanner) (driver.MetricsCount, error) {
		var c driver.MetricsCount
		return c, s.Scan(&c.Queue, &c.Kind, &c.State, &c.N)
	})(e.rquery(ctx, "JobMetricsFinished", sql.Named("since", now-window.Microseconds())))
	if err != nil {
		return nil, err
	}
	type counter struct {
		name string
		n    int64
	}
	cs, err := collect(func(s scanner) (counter, error) {
		var c counter
		return c, s.Scan(&c.name, &c.n)
	})(e.rquery(ctx, "CounterList"))
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		m.Counters[c.name] = c.n
	}
	return m, nil
}

func (e executor) CounterAdd(ctx context.Context, name string, n int64) error {
	_, err := e.wexec(ctx, "CounterAdd", sql.Named("name", name), sql.Named("n", n))
	return err
}
