package driver

import (
	"context"
	"math"
	"time"
)

// HistoryBuckets is how many buckets a duration histogram of the history
// has. Bucket 0 holds durations under 1 ms; bucket i (1 ≤ i < 47) those
// from 2^((i-1)/2) ms up to 2^(i/2) ms; bucket 47 those of 2^23 ms (2 h
// 20 min) and more. Each bucket spans a factor of √2, so a quantile read
// from it (the bucket's geometric middle) is within 19% of the true one.
const HistoryBuckets = 48

// The outcomes of an attempt that the history counts.
const (
	HistoryCompleted = "completed" // the job completed
	HistoryRetried   = "retried"   // the attempt failed and the job runs again
	HistoryFailed    = "failed"    // the attempt failed and the job failed for good
	HistoryCancelled = "cancelled" // the job ended cancelled while it ran
	HistorySnoozed   = "snoozed"   // the worker asked to run the job later
)

// HistoryOutcomes lists the outcomes the history counts.
var HistoryOutcomes = []string{HistoryCompleted, HistoryRetried, HistoryFailed, HistoryCancelled, HistorySnoozed}

// HistoryBucket answers the histogram bucket of d.
func HistoryBucket(d time.Duration) int {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 1 {
		return 0
	}
	i := int(math.Floor(2*math.Log2(ms))) + 1
	return min(max(i, 1), HistoryBuckets-1)
}

// HistoryBucketMiddle answers the duration a bucket stands for: the
// geometric middle of its bounds (0.5 ms for bucket 0; the last bucket's
// lower bound times 2^¼).
func HistoryBucketMiddle(i int) time.Duration {
	if i <= 0 {
		return 500 * time.Microsecond
	}
	ms := math.Pow(2, (float64(i)-0.5)/2)
	return time.Duration(ms * float64(time.Millisecond))
}

// HistoryCount is the attempts of one queue and kind that ended with one
// outcome in one minute, with histograms (HistoryBuckets long) of their
// wait (run_at to start) and their run time (start to end).
type HistoryCount struct {
	Minute  time.Time
	Queue   string
	Kind    string
	Outcome string
	N       int64
	Wait    []int64
	Run     []int64
}

// HistoryParams choose the history read: minutes at or after Since and
// before Until, in buckets of Bucket (a whole number of minutes), of one
// Queue and one Kind ("" for all).
type HistoryParams struct {
	Since, Until time.Time
	Bucket       time.Duration
	Queue, Kind  string
}

// HistoryOutcomeCount is the attempts that ended with an outcome in a
// bucket (its index from Since).
type HistoryOutcomeCount struct {
	Bucket  int
	Outcome string
	N       int64
}

// HistoryTiming is the wait and run histograms of a bucket, every outcome
// together.
type HistoryTiming struct {
	Bucket    int
	Wait, Run []int64
}

// HistoryDepthPeak is the largest depth sampled in a bucket, each state on
// its own, the queues and kinds chosen added up per sample.
type HistoryDepthPeak struct {
	Bucket                      int
	Pending, Scheduled, Running int64
}

// History is what HistoryRead answers.
type History struct {
	Counts []HistoryOutcomeCount
	Timing []HistoryTiming
	Depth  []HistoryDepthPeak
}

// AddTiming adds the counts of histogram bucket i (from 0) to the timing
// of a bucket of the history; drivers read them ordered by bucket.
func (h *History) AddTiming(bucket, i int, wait, run int64) {
	if i < 0 || i >= HistoryBuckets {
		return
	}
	if n := len(h.Timing); n == 0 || h.Timing[n-1].Bucket != bucket {
		h.Timing = append(h.Timing, HistoryTiming{Bucket: bucket, Wait: make([]int64, HistoryBuckets),
			Run: make([]int64, HistoryBuckets)})
	}
	t := &h.Timing[len(h.Timing)-1]
	t.Wait[i] += wait
	t.Run[i] += run
}

// HistoryStore keeps the per-minute history of attempts and queue depth.
// Rows are only ever added to (counts) or set (a depth sample) and pruned
// by age: a job retried by hand later does not change them.
type HistoryStore interface {
	// HistoryAdd adds counts and histograms to the rows of their minute,
	// queue, kind and outcome (made when missing).
	HistoryAdd(ctx context.Context, counts []HistoryCount) error
	// HistorySampleDepth records the live jobs of every queue and kind as
	// the sample of minute, read from the jobs in the statement.
	HistorySampleDepth(ctx context.Context, minute time.Time) error
	// HistoryRead answers the history that p chooses.
	//skiplock:read
	HistoryRead(ctx context.Context, p HistoryParams) (*History, error)
	// HistoryPrune deletes the rows of minutes before before and answers
	// how many.
	HistoryPrune(ctx context.Context, before time.Time) (int64, error)
}
