package driver

import (
	"context"
	"time"
)

// MetricsStore reads what a metrics scrape shows, for the whole cluster and
// cheaply at any archive size: live jobs come from the hot table, finished
// ones from a recent window of the archive (indexed by finished_at), and
// counters from one small table.
type MetricsStore interface {
	// JobMetrics counts live jobs by queue, kind and state (one pass over
	// the hot table), those of them waiting to retry, and jobs finished
	// after now minus window, and reads the queues' settings and, where
	// the database tells it from its catalog, the hot table's size.
	//skiplock:read
	//skiplock:replica
	JobMetrics(ctx context.Context, window time.Duration) (*Metrics, error)
	// CounterAdd adds n to a cluster-wide counter kept in the database.
	CounterAdd(ctx context.Context, name string, n int64) error
}

// MetricsCount is a number of jobs of one queue, kind and state.
type MetricsCount struct {
	Queue string
	Kind  string
	State JobState
	N     int64
	// OldestPendingAge is, in a count of pending jobs, how long the oldest
	// of them has been due.
	OldestPendingAge time.Duration
}

// Metrics is what JobMetrics reads.
type Metrics struct {
	// Live counts live jobs (pending, scheduled, waiting, running, paused).
	Live []MetricsCount
	// RetryWaiting counts live jobs that failed an attempt and wait for the
	// next one (pending or scheduled with an attempt spent since its last
	// manual retry: attempt > attempt_base).
	RetryWaiting []MetricsCount
	// Finished counts jobs finished within the window, by final state.
	Finished []MetricsCount
	// Paused holds every queue with settings: true when it is paused.
	Paused map[string]bool
	// Counters are the cluster-wide counters (CounterAdd), by name.
	Counters map[string]int64
	// HotTable is what the hot table takes, where the database's catalog
	// tells it without reading the table (PostgreSQL); nil elsewhere.
	HotTable *HotTableSize
}

// HotTableSize is what the hot table takes, read from the database's
// catalog without reading the table.
type HotTableSize struct {
	// Bytes is the hot table with its indexes, plus its spill tables with
	// theirs.
	Bytes int64
	// SpillTables counts the spill tables (HotTableSpill): 0 unless a
	// transaction open elsewhere holds a lock on the hot table, or did
	// until a moment ago.
	SpillTables int64
}

// Counter names the library keeps.
const (
	CounterRescuedRequeued  = "rescued_requeued"
	CounterRescuedFailed    = "rescued_failed"
	CounterRescuedCancelled = "rescued_cancelled"
)
