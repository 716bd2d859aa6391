package skiplock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/testwait"
)

// The history counts each attempt as it ends on a worker, by outcome (a
// failure that runs again is retried, the last one failed), Stop writes
// what the flush loop had not, and retrying the failed job by hand later
// leaves the history as it was (issue 43: retrying changed the chart).
func TestHistoryCountsAttemptsAsTheyEnd(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			workers := skiplock.NewWorkers()
			skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](func(_ context.Context, j *skiplock.Job[sleepArgs]) error {
				if j.Args.N == 1 {
					return errors.New("upstream said no")
				}
				return nil
			}))
			c, err := skiplock.NewClient(open(t), &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 4}},
				Workers: workers, FetchPollInterval: 50 * time.Millisecond, Backoff: func(int) time.Duration { return 0 }})
			if err != nil {
				t.Fatal(err)
			}
			bad, err := c.Insert(ctx, sleepArgs{N: 1}, &skiplock.InsertOpts{MaxRetries: new(1)})
			if err != nil {
				t.Fatal(err)
			}
			var ok []int64
			for range 2 {
				r, err := c.Insert(ctx, sleepArgs{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				ok = append(ok, r.Job.ID)
			}
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, 30*time.Second, "the jobs to finish", func() bool {
				for _, id := range append(ok, bad.Job.ID) {
					if j, err := c.JobGet(ctx, id); err != nil || !j.State.Finished() {
						return false
					}
				}
				return true
			})
			if err := c.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			totals := func() skiplock.HistoryPoint {
				h, err := c.History(ctx, skiplock.HistoryParams{Range: "1h", Queue: "default", Kind: "sleep"})
				if err != nil {
					t.Fatal(err)
				}
				return h.Totals()
			}
			got := totals()
			if got.Completed != 2 || got.Retried != 1 || got.Failed != 1 || got.FailureRate == nil || *got.FailureRate != 0.5 {
				t.Fatalf("history after Stop: %+v", got)
			}
			if _, err := c.JobRetry(ctx, bad.Job.ID); err != nil {
				t.Fatal(err)
			}
			if again := totals(); again.Completed != 2 || again.Retried != 1 || again.Failed != 1 {
				t.Fatalf("history after a retry by hand: %+v", again)
			}
			if _, err := c.History(ctx, skiplock.HistoryParams{Range: "2d"}); !errors.As(err, new(*skiplock.ValidationError)) {
				t.Fatalf("range 2d: %v", err)
			}
		})
	}
}
