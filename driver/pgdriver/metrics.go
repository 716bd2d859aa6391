package pgdriver

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) JobMetrics(ctx context.Context, window time.Duration) (*driver.Metrics, error) {
	m := &driver.Metrics{Counters: map[string]int64{}, Paused: map[string]bool{}}
	rows, err := e.q.Query(ctx, q("QueueSettings"))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		var paused bool
		if err := rows.Scan(&name, &paused); err != nil {
			rows.Close()
			return nil, err
		}
		m.Paused[name] = paused
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = e.q.Query(ctx, q("JobMetricsLive"))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c driver.MetricsCount
		var retry int64
		var age float64
		if err := rows.Scan(&c.Queue, &c.Kind, &c.State, &c.N, &retry, &age); err != nil {
			rows.Close()
			return nil, err
		}
		if age := fromSecs(age); c.State == driver.StatePending && age > 0 {
			c.OldestPendingAge = age
		}
		m.Live = append(m.Live, c)
		if retry > 0 {
			c.N, c.OldestPendingAge = retry, 0
			m.RetryWaiting = append(m.RetryWaiting, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = e.q.Query(ctx, jobMetricsFinished.SQL, jobMetricsFinished.Args(windowArg{window.Seconds()})...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c driver.MetricsCount
		if err := rows.Scan(&c.Queue, &c.Kind, &c.State, &c.N); err != nil {
			rows.Close()
			return nil, err
		}
		m.Finished = append(m.Finished, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	m.HotTable = &driver.HotTableSize{}
	if err := e.q.QueryRow(ctx, q("JobMetricsHotTable")).Scan(&m.HotTable.Bytes, &m.HotTable.SpillTables); err != nil {
		return nil, fmt.Errorf("hot table size: %w", err)
	}
	rows, err = e.q.Query(ctx, q("CounterList"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		m.Counters[name] = n
	}
	return m, rows.Err()
}

func (e executor) CounterAdd(ctx context.Context, name string, n int64) error {
	_, err := e.q.Exec(ctx, counterAdd.SQL, counterAdd.Args(counterArgs{name, n})...)
	return err
}

var (
	jobMetricsFinished = bind[windowArg]("JobMetricsFinished")
	counterAdd         = bind[counterArgs]("CounterAdd")
)

type windowArg struct {
	Seconds float64 `sql:"window"`
}

type counterArgs struct {
	Name  string `sql:"name"`
	Value int64  `sql:"value"`
}
