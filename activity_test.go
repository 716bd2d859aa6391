package skiplock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// Activity answers every bucket of the window, oldest first, with the jobs
// finished in it by state, and the running jobs and their workers.
func TestActivitySeries(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		done := b.insert(t, c, taskArgs{}, &skiplock.InsertOpts{Queue: "act"})
		b.insert(t, c, taskArgs{}, &skiplock.InsertOpts{Queue: "act"})
		jobs, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "act", WorkerID: "w", Max: 2})
		if err != nil || len(jobs) != 2 {
			t.Fatalf("claim: %d jobs, %v", len(jobs), err)
		}
		if _, _, err := c.Complete(b.ctx, done.ID, skiplock.CompleteParams{WorkerID: "w"}); err != nil {
			t.Fatal(err)
		}
		a, err := c.Activity(b.ctx, time.Hour, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Series) != 60 || a.Running != 1 || a.RunningWorkers != 1 || a.Totals().Completed != 1 {
			t.Fatalf("activity: %d buckets, running %d on %d workers, totals %+v", len(a.Series), a.Running,
				a.RunningWorkers, a.Totals())
		}
		for i := 1; i < len(a.Series); i++ {
			if a.Series[i].Start.Sub(a.Series[i-1].Start) != time.Minute {
				t.Fatalf("bucket %d starts at %s after %s", i, a.Series[i].Start, a.Series[i-1].Start)
			}
		}
		var ve *skiplock.ValidationError
		if _, err := c.Activity(b.ctx, time.Hour, time.Millisecond); !errors.As(err, &ve) || ve.Field != "bucket" {
			t.Fatalf("too many buckets: %v", err)
		}
	})
}
