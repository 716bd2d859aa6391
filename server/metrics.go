package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/skiplockprom"
)

// metrics are the server's Prometheus metrics, in a registry of its own.
// The counters count what passes through this server's API; the queue and
// job gauges (package skiplockprom) are read from the database at scrape
// time and are the same on every server.
type metrics struct {
	registry                             *prometheus.Registry
	handler                              http.Handler
	enqueued, completed, failed, retried *prometheus.CounterVec
	duration                             *prometheus.HistogramVec
	requests                             *prometheus.CounterVec
	pairs                                labelPairs
}

// maxLabelPairs bounds the kind and queue label pairs of the counters:
// kinds and queues are names clients choose, and every pair would add
// series to the server and to Prometheus for good. Pairs past the bound
// count under otherLabel.
const maxLabelPairs = 1000

// otherLabel is the kind and queue of the pairs past maxLabelPairs.
const otherLabel = "_other"

// labelPairs are the kind and queue pairs the counters have seen.
type labelPairs struct {
	mu   sync.Mutex
	seen map[[2]string]struct{}
}

// of answers the labels to count kind and queue under.
func (l *labelPairs) of(kind, queue string) (string, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]string{kind, queue}
	if _, ok := l.seen[k]; ok {
		return kind, queue
	}
	if len(l.seen) >= maxLabelPairs {
		return otherLabel, otherLabel
	}
	if l.seen == nil {
		l.seen = map[[2]string]struct{}{}
	}
	l.seen[k] = struct{}{}
	return kind, queue
}

func newMetrics(client *skiplock.Client) *metrics {
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
		skiplockprom.NewCollector(client), &janitorCollector{store: client}, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

// completion counts a completed job, and its time from claim to completion
// when timed.
func (m *metrics) completion(kind, queue string, took time.Duration, timed bool) {
	k, q := m.pairs.of(kind, queue)
	m.completed.WithLabelValues(k, q).Inc()
	if timed {
		m.duration.WithLabelValues(k, q).Observe(took.Seconds())
	}
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
