// Package skiplockprom exports a Skiplock cluster's queue metrics to
// Prometheus: register NewCollector(client) in a registry. `skiplock serve`
// does so at /metrics; a program that runs workers in-process can do the
// same without a server. Every value is read from the database at scrape
// time, so every process reports the same numbers.
package skiplockprom

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiplock/skiplock"
)

var (
	queueJobsDesc = prometheus.NewDesc("skiplock_queue_jobs", "Live jobs of a queue by state.",
		[]string{"queue", "state"}, nil)
	queueOldestDesc = prometheus.NewDesc("skiplock_queue_oldest_pending_age_seconds",
		"Age of the oldest pending job of a queue.", []string{"queue"}, nil)
	queuePausedDesc = prometheus.NewDesc("skiplock_queue_paused", "1 when the queue is paused.",
		[]string{"queue"}, nil)
	jobsDesc = prometheus.NewDesc("skiplock_jobs", "Live jobs by queue, kind and state.",
		[]string{"queue", "kind", "state"}, nil)
	retryDesc = prometheus.NewDesc("skiplock_jobs_retry_waiting",
		"Live jobs that failed an attempt and wait for the next one.", []string{"queue", "kind"}, nil)
	finishedDesc = prometheus.NewDesc("skiplock_jobs_finished_recent",
		"Jobs finished in the last 5 minutes by queue, kind and final state.",
		[]string{"queue", "kind", "state"}, nil)
	rescuedDesc = prometheus.NewDesc("skiplock_jobs_rescued_total",
		"Running jobs whose lease expired, by what the rescue did (requeued, failed, cancelled).",
		[]string{"outcome"}, nil)
	flowRunningDesc = prometheus.NewDesc("skiplock_flow_running",
		"Jobs running under a flow rule's keys (docs/flow-control.md).", []string{"queue", "rule"}, nil)
	flowLimitDesc = prometheus.NewDesc("skiplock_flow_concurrency_limit",
		"Running jobs a flow rule allows per key.", []string{"queue", "rule"}, nil)
	flowKeysDesc = prometheus.NewDesc("skiplock_flow_keys", "Keys a flow rule has seen.", []string{"queue", "rule"}, nil)
	hotBytesDesc = prometheus.NewDesc("skiplock_hot_table_bytes",
		"Bytes the table of live jobs takes with its indexes and spill tables (PostgreSQL; docs/hot-path-storage.md).",
		nil, nil)
	hotSpillDesc = prometheus.NewDesc("skiplock_hot_spill_tables",
		"Spill tables taking new jobs while a transaction holds the table of live jobs (PostgreSQL); 0 normally.",
		nil, nil)
	upDesc   = prometheus.NewDesc("skiplock_database_up", "1 when the database answered the scrape.", nil, nil)
	readDesc = prometheus.NewDesc("skiplock_metrics_read_seconds",
		"Time the scrape took to read the metrics from the database.", nil, nil)
)

// Collector is a prometheus.Collector over a client's Metrics.
type Collector struct {
	client  *skiplock.Client
	timeout time.Duration
}

// NewCollector answers a collector that reads client.Metrics at each scrape,
// giving up after 5 seconds (skiplock_database_up then reports 0).
func NewCollector(client *skiplock.Client) *Collector {
	return &Collector{client: client, timeout: 5 * time.Second}
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueJobsDesc, queueOldestDesc, queuePausedDesc, jobsDesc,
		retryDesc, finishedDesc, rescuedDesc, flowRunningDesc, flowLimitDesc, flowKeysDesc, hotBytesDesc, hotSpillDesc,
		upDesc, readDesc} {
		ch <- d
	}
}

// Collect reads the metrics from the database.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	start := time.Now()
	m, err := c.client.Metrics(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(readDesc, prometheus.GaugeValue, time.Since(start).Seconds())
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, q := range m.Queues {
		for _, state := range liveStates {
			gauge(queueJobsDesc, float64(q.Counts[state]), q.Name, string(state))
		}
		gauge(queueOldestDesc, q.OldestPendingAge.Seconds(), q.Name)
		paused := 0.0
		if q.Paused {
			paused = 1
		}
		gauge(queuePausedDesc, paused, q.Name)
		for _, f := range q.Flow {
			gauge(flowRunningDesc, float64(f.Running), q.Name, f.Rule)
			gauge(flowKeysDesc, float64(f.Keys), q.Name, f.Rule)
			if f.Concurrency > 0 {
				gauge(flowLimitDesc, float64(f.Concurrency), q.Name, f.Rule)
			}
		}
	}
	for _, n := range m.Live {
		gauge(jobsDesc, float64(n.N), n.Queue, n.Kind, string(n.State))
	}
	retry := map[[2]string]int64{}
	for _, n := range m.RetryWaiting {
		retry[[2]string{n.Queue, n.Kind}] += n.N
	}
	for k, n := range retry {
		gauge(retryDesc, float64(n), k[0], k[1])
	}
	for _, n := range m.Finished {
		gauge(finishedDesc, float64(n.N), n.Queue, n.Kind, string(n.State))
	}
	if h := m.HotTable; h != nil { // PostgreSQL only: nothing made up elsewhere
		gauge(hotBytesDesc, float64(h.Bytes))
		gauge(hotSpillDesc, float64(h.SpillTables))
	}
	for _, outcome := range []string{"requeued", "failed", "cancelled"} {
		ch <- prometheus.MustNewConstMetric(rescuedDesc, prometheus.CounterValue, float64(m.Rescued[outcome]), outcome)
	}
}

// liveStates are the states skiplock_queue_jobs reports for every queue,
// zero included, so that alerts see a queue drain to 0.
var liveStates = []skiplock.JobState{skiplock.StateScheduled, skiplock.StateWaiting,
	skiplock.StatePending, skiplock.StateRunning, skiplock.StatePaused}
