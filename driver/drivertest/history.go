package drivertest

import (
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e *env) history() driver.HistoryStore { return need[driver.HistoryStore](e, e.d) }

// histogram answers a histogram with n in each of the buckets of ds.
func histogram(n int64, ds ...time.Duration) []int64 {
	h := make([]int64, driver.HistoryBuckets)
	for _, d := range ds {
		h[driver.HistoryBucket(d)] += n
	}
	return h
}

// Counts add to the rows of their minute (two clients' flushes of the same
// minute add up, histograms key by key); a read buckets the minutes, sums
// the outcomes and histograms, filters by queue and kind, and the depth
// sample takes the live jobs of the moment.
var _ = add("History", func(e *env) {
	h := e.history()
	since := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
	m0, m1, m5 := since, since.Add(time.Minute), since.Add(5*time.Minute)
	add := func(counts ...driver.HistoryCount) {
		e.t.Helper()
		if err := h.HistoryAdd(e.ctx, counts); err != nil {
			e.t.Fatal(err)
		}
	}
	add(driver.HistoryCount{Minute: m0, Queue: "q", Kind: "a", Outcome: driver.HistoryCompleted, N: 3,
		Wait: histogram(3, 2*time.Millisecond), Run: histogram(3, 100*time.Millisecond)},
		driver.HistoryCount{Minute: m1, Queue: "q", Kind: "b", Outcome: driver.HistoryFailed, N: 1,
			Wait: histogram(1, time.Second), Run: histogram(1, time.Minute)})
	add(driver.HistoryCount{Minute: m0, Queue: "q", Kind: "a", Outcome: driver.HistoryCompleted, N: 2,
		Wait: histogram(2, 2*time.Millisecond), Run: histogram(2, 10*time.Second)},
		driver.HistoryCount{Minute: m5, Queue: "r", Kind: "a", Outcome: driver.HistoryRetried, N: 4,
			Wait: histogram(4, 0), Run: histogram(4, time.Millisecond)})
	read := func(queue, kind string) *driver.History {
		e.t.Helper()
		got, err := h.HistoryRead(e.ctx, driver.HistoryParams{Since: since, Until: since.Add(time.Hour),
			Bucket: 5 * time.Minute, Queue: queue, Kind: kind})
		if err != nil {
			e.t.Fatal(err)
		}
		return got
	}
	all := read("", "")
	want := []driver.HistoryOutcomeCount{{Bucket: 0, Outcome: driver.HistoryCompleted, N: 5},
		{Bucket: 0, Outcome: driver.HistoryFailed, N: 1}, {Bucket: 1, Outcome: driver.HistoryRetried, N: 4}}
	if len(all.Counts) != len(want) {
		e.t.Fatalf("counts %+v, want %+v", all.Counts, want)
	}
	for i := range want {
		if all.Counts[i] != want[i] {
			e.t.Fatalf("counts %+v, want %+v", all.Counts, want)
		}
	}
	if len(all.Timing) != 2 || all.Timing[0].Bucket != 0 || all.Timing[1].Bucket != 1 {
		e.t.Fatalf("timing %+v", all.Timing)
	}
	first := all.Timing[0]
	if first.Wait[driver.HistoryBucket(2*time.Millisecond)] != 5 || first.Wait[driver.HistoryBucket(time.Second)] != 1 ||
		first.Run[driver.HistoryBucket(100*time.Millisecond)] != 3 || first.Run[driver.HistoryBucket(10*time.Second)] != 2 ||
		first.Run[driver.HistoryBucket(time.Minute)] != 1 {
		e.t.Fatalf("first bucket's histograms: wait %v run %v", first.Wait, first.Run)
	}
	if c := read("r", "").Counts; len(c) != 1 || c[0].N != 4 {
		e.t.Fatalf("queue r: %+v", c)
	}
	if c := read("", "b").Counts; len(c) != 1 || c[0].Outcome != driver.HistoryFailed {
		e.t.Fatalf("kind b: %+v", c)
	}

	// Depth: the live jobs at the sample, by queue and kind.
	e.insert(job("a"))
	e.insert(job("a"))
	e.claimID(e.insert(job("b")), "w", lease)
	e.complete(e.claimID(e.insert(job("b")), "w", lease), "")
	if err := h.HistorySampleDepth(e.ctx, m1); err != nil {
		e.t.Fatal(err)
	}
	if err := h.HistorySampleDepth(e.ctx, m1); err != nil { // a second sample of a minute replaces the first
		e.t.Fatal(err)
	}
	d := read("", "").Depth
	if len(d) != 1 || d[0] != (driver.HistoryDepthPeak{Bucket: 0, Pending: 2, Running: 1}) {
		e.t.Fatalf("depth %+v", d)
	}
	if d := read("", "b").Depth; len(d) != 1 || d[0].Pending != 0 || d[0].Running != 1 {
		e.t.Fatalf("depth of kind b %+v", d)
	}

	n, err := h.HistoryPrune(e.ctx, m1)
	if err != nil || n != 1 {
		e.t.Fatalf("prune before the second minute: %d rows, %v", n, err)
	}
	if c := read("", "").Counts; len(c) != 2 || c[0].Outcome != driver.HistoryFailed {
		e.t.Fatalf("counts after prune %+v", c)
	}
})
