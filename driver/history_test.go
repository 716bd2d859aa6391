package driver

import (
	"testing"
	"time"
)

// Every bucket's middle falls in the bucket, and a duration read back as
// its bucket's middle is within 19% of itself (buckets span √2).
func TestHistoryBucketsPrecision(t *testing.T) {
	for i := range HistoryBuckets {
		if got := HistoryBucket(HistoryBucketMiddle(i)); got != i {
			t.Fatalf("the middle of bucket %d (%s) falls in bucket %d", i, HistoryBucketMiddle(i), got)
		}
	}
	for d := time.Millisecond; d < 2*time.Hour; d = d * 21 / 20 {
		mid := HistoryBucketMiddle(HistoryBucket(d))
		if r := float64(mid) / float64(d); r < 1/1.19 || r > 1.19 {
			t.Fatalf("%s reads back as %s (%.2f×)", d, mid, r)
		}
	}
	if HistoryBucket(0) != 0 || HistoryBucket(-time.Second) != 0 || HistoryBucket(1000*time.Hour) != HistoryBuckets-1 {
		t.Fatal("durations below 1 ms or past the last bound are not in the end buckets")
	}
}
