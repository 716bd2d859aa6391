package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skiplock/skiplock/driver"
)

// metrics are the server's Prometheus metrics, in a registry of its own.
// The job counters count what passes through this server's API; queue
// depths are read from the database at scrape time.
type metrics struct {
	registry                             *prometheus.Registry
	handler                              http.Handler
	enqueued, completed, failed, retried *prometheus.CounterVec
	duration                             *prometheus.HistogramVec
	requests                             *prometheus.CounterVec
}

func newMetrics(store driver.StatsStore) *metrics {
	byKindQueue := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"kind", "queue"})
	}
	m := &metrics{
		registry:  prometheus.NewRegistry(),
		enqueued:  byKindQueue("skiplock_jobs_enqueued_total", "Jobs enqueued through the API."),
		completed: byKindQueue("skiplock_jobs_completed_total", "Jobs completed by HTTP workers."),
		failed:    byKindQueue("skiplock_jobs_failed_total", "Jobs failed for good by HTTP workers."),
		retried:   byKindQueue("skiplock_jobs_retried_total", "Failed attempts of HTTP workers that will be retried."),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "skiplock_job_duration_seconds",
			Help:    "Time from claim to completion of jobs completed by HTTP workers.",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 12)}, []string{"kind", "queue"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skiplock_http_requests_total",
			Help: "HTTP requests by route and status code."}, []string{"route", "code"}),
	}
	m.registry.MustRegister(m.enqueued, m.completed, m.failed, m.retried, m.duration, m.requests,
		&queueCollector{store: store}, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) request(route string, status int) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := unscoped(p); err != nil {
		return err
	}
	s.metrics.handler.ServeHTTP(w, r)
	return nil
}

var (
	queueJobsDesc = prometheus.NewDesc("skiplock_queue_jobs", "Live jobs of a queue by state.",
		[]string{"queue", "state"}, nil)
	queueOldestDesc = prometheus.NewDesc("skiplock_queue_oldest_pending_age_seconds",
		"Age of the oldest pending job of a queue.", []string{"queue"}, nil)
	queuePausedDesc = prometheus.NewDesc("skiplock_queue_paused", "1 when the queue is paused.",
		[]string{"queue"}, nil)
	queueUpDesc = prometheus.NewDesc("skiplock_database_up", "1 when the database answered the scrape.", nil, nil)
)

// queueCollector reads queue depths from the database at scrape time.
type queueCollector struct{ store driver.StatsStore }

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueJobsDesc
	ch <- queueOldestDesc
	ch <- queuePausedDesc
	ch <- queueUpDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	queues, err := c.store.QueueList(ctx, false)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(queueUpDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(queueUpDesc, prometheus.GaugeValue, 1)
	for _, q := range queues {
		v := NewQueueView(q)
		for state, n := range v.Counts {
			ch <- prometheus.MustNewConstMetric(queueJobsDesc, prometheus.GaugeValue, float64(n), q.Name, string(state))
		}
		ch <- prometheus.MustNewConstMetric(queueOldestDesc, prometheus.GaugeValue, q.OldestPendingAge.Seconds(), q.Name)
		paused := 0.0
		if q.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(queuePausedDesc, prometheus.GaugeValue, paused, q.Name)
	}
}
