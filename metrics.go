package skiplock

import (
	"context"
	"sort"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// MetricsWindow is how far back Metrics counts finished jobs.
const MetricsWindow = 5 * time.Minute

// MetricsCount is a number of jobs of one queue, kind and state.
type MetricsCount = driver.MetricsCount

// Metrics is the state of every queue as the database holds it, the same
// whichever process reads it: what the server's /metrics shows, and what an
// in-process user exports without a server (package skiplockprom turns it
// into Prometheus metrics).
type Metrics struct {
	// Queues are every queue's settings, live counts and oldest pending
	// age, and the flow rules that apply to it with their use.
	Queues []QueueInfo
	// Live counts live jobs by queue, kind and state.
	Live []MetricsCount
	// RetryWaiting counts live jobs that failed an attempt and wait for the
	// next one.
	RetryWaiting []MetricsCount
	// Finished counts jobs that finished within Window, by final state.
	Finished []MetricsCount
	Window   time.Duration
	// Rescued counts, since the database was created, running jobs whose
	// lease expired, by what the rescue did: requeued, failed, cancelled.
	Rescued map[string]int64
	// HotTable is what the table of live jobs takes, on PostgreSQL: with
	// its indexes and spill tables (docs/hot-path-storage.md) in bytes,
	// and how many spill tables there are. nil on SQLite.
	HotTable *HotTableSize
}

// HotTableSize is what the table of live jobs takes (Metrics.HotTable).
type HotTableSize = driver.HotTableSize

// Metrics reads the cluster's queue metrics from the database: a handful of
// statements over the live jobs and the last MetricsWindow of the archive,
// cheap at any archive size.
func (c *Client) Metrics(ctx context.Context) (*Metrics, error) {
	m, err := c.driver.JobMetrics(ctx, MetricsWindow)
	if err != nil {
		return nil, err
	}
	queues, err := c.withFlow(ctx, queuesOf(m))
	if err != nil {
		return nil, err
	}
	return &Metrics{Queues: queues, Live: m.Live, RetryWaiting: m.RetryWaiting, Finished: m.Finished,
		Window: MetricsWindow, Rescued: map[string]int64{
			"requeued":  m.Counters[driver.CounterRescuedRequeued],
			"failed":    m.Counters[driver.CounterRescuedFailed],
			"cancelled": m.Counters[driver.CounterRescuedCancelled],
		}, HotTable: m.HotTable}, nil
}

// queuesOf sums live counts into queues, as QueueList(ctx, false) answers
// them, without reading the hot table twice.
func queuesOf(m *driver.Metrics) []QueueInfo {
	byName := map[string]*QueueInfo{}
	get := func(name string) *QueueInfo {
		if byName[name] == nil {
			byName[name] = &QueueInfo{Name: name, Counts: map[JobState]int64{}}
		}
		return byName[name]
	}
	for name, paused := range m.Paused {
		get(name).Paused = paused
	}
	for _, n := range m.Live {
		q := get(n.Queue)
		q.Counts[n.State] += n.N
		q.OldestPendingAge = max(q.OldestPendingAge, n.OldestPendingAge)
	}
	out := make([]QueueInfo, 0, len(byName))
	for _, q := range byName {
		out = append(out, *q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
