package vault

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/skiplock/skiplock"
)

// metricsRecord is one row of a metrics file: a queue's jobs of one part
// (the jobs of one hour that one store wrote). Counts and run_total_ms add
// up across the parts of an hour; run_mean_ms and run_p95_ms are the part's.
type metricsRecord struct {
	Hour      time.Time `parquet:"hour,timestamp(microsecond)"`
	Queue     string    `parquet:"queue"`
	Jobs      int64     `parquet:"jobs"`
	Completed int64     `parquet:"completed"`
	Failed    int64     `parquet:"failed"`
	Cancelled int64     `parquet:"cancelled"`
	// Runs counts the jobs that started (a job cancelled before it ran
	// has no run time); the run times are over them, in milliseconds.
	Runs       int64   `parquet:"runs"`
	RunTotalMs float64 `parquet:"run_total_ms"`
	RunMeanMs  float64 `parquet:"run_mean_ms"`
	RunP95Ms   float64 `parquet:"run_p95_ms"`
}

// hourMetrics answers one row per queue of jobs finished in hour, sorted
// by queue.
func hourMetrics(hour time.Time, jobs []*skiplock.JobRow) []metricsRecord {
	byQueue := map[string]*metricsRecord{}
	runs := map[string][]float64{}
	for _, j := range jobs {
		r := byQueue[j.Queue]
		if r == nil {
			r = &metricsRecord{Hour: hour, Queue: j.Queue}
			byQueue[j.Queue] = r
		}
		r.Jobs++
		switch j.State {
		case skiplock.StateCompleted:
			r.Completed++
		case skiplock.StateFailed:
			r.Failed++
		case skiplock.StateCancelled:
			r.Cancelled++
		}
		if j.StartedAt != nil && j.FinishedAt != nil {
			ms := float64(j.FinishedAt.Sub(*j.StartedAt)) / float64(time.Millisecond)
			runs[j.Queue] = append(runs[j.Queue], max(ms, 0))
		}
	}
	out := make([]metricsRecord, 0, len(byQueue))
	for q, r := range byQueue {
		d := runs[q]
		if len(d) > 0 {
			slices.Sort(d)
			r.Runs = int64(len(d))
			for _, v := range d {
				r.RunTotalMs += v
			}
			r.RunMeanMs = r.RunTotalMs / float64(len(d))
			r.RunP95Ms = percentile(d, 0.95)
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b metricsRecord) int { return cmp.Compare(a.Queue, b.Queue) })
	return out
}

// percentile answers the nearest-rank percentile p of sorted values.
func percentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}
