package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiplock/skiplock/driver"
)

// janitorRunsRead is how many recent runs a scrape reads to find the last
// run of each outcome.
const janitorRunsRead = 50

var (
	janitorLastDesc = prometheus.NewDesc("skiplock_janitor_last_run_timestamp_seconds",
		"End of the last janitor run (not a dry run) of each outcome: ok, refused, failed.", []string{"outcome"}, nil)
	janitorJobsDesc = prometheus.NewDesc("skiplock_janitor_last_run_jobs_deleted",
		"Jobs the last janitor run (not a dry run) deleted, by state.", []string{"state"}, nil)
	janitorPartsDesc = prometheus.NewDesc("skiplock_janitor_last_run_partitions_dropped",
		"Archive partitions the last janitor run (not a dry run) dropped.", nil, nil)
	janitorBytesDesc = prometheus.NewDesc("skiplock_janitor_last_run_bytes_freed",
		"Approximate stored size of the jobs the last janitor run (not a dry run) deleted.", nil, nil)
	janitorDurationDesc = prometheus.NewDesc("skiplock_janitor_last_run_duration_seconds",
		"Duration of the last janitor run (not a dry run).", nil, nil)
)

// janitorCollector reads the recorded janitor runs at scrape time: the
// leader that ran them may be another server.
type janitorCollector struct{ store driver.RetentionStore }

func (c *janitorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{janitorLastDesc, janitorJobsDesc, janitorPartsDesc, janitorBytesDesc,
		janitorDurationDesc} {
		ch <- d
	}
}

func (c *janitorCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	runs, err := c.store.JanitorRunList(ctx, janitorRunsRead)
	if err != nil {
		return // skiplock_database_up says so
	}
	seen := map[string]bool{}
	var last *driver.JanitorRun
	for _, r := range runs {
		if r.DryRun || seen[r.Outcome] {
			continue
		}
		seen[r.Outcome] = true
		if last == nil {
			last = r
		}
		ch <- prometheus.MustNewConstMetric(janitorLastDesc, prometheus.GaugeValue,
			float64(r.FinishedAt.UnixMilli())/1000, r.Outcome)
	}
	if last == nil {
		return
	}
	for _, s := range []driver.JobState{driver.StateCompleted, driver.StateFailed, driver.StateCancelled} {
		ch <- prometheus.MustNewConstMetric(janitorJobsDesc, prometheus.GaugeValue, float64(last.ByState[s]), string(s))
	}
	ch <- prometheus.MustNewConstMetric(janitorPartsDesc, prometheus.GaugeValue, float64(last.Partitions))
	ch <- prometheus.MustNewConstMetric(janitorBytesDesc, prometheus.GaugeValue, float64(last.Bytes))
	ch <- prometheus.MustNewConstMetric(janitorDurationDesc, prometheus.GaugeValue,
		last.FinishedAt.Sub(last.StartedAt).Seconds())
}
