package skiplock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/testwait"
)

// TestJobsBulkPauseResume: a bulk pause holds the live jobs its filter
// picks as JobPause does (a running one is asked and goes to paused when
// its worker returns), a bulk resume releases them to the state they would
// be in, and each refuses states it does not act on.
func TestJobsBulkPauseResume(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, open func(t *testing.T) driver.Driver) {
		started := make(chan int64, 2)
		workers := skiplock.NewWorkers()
		skiplock.MustAddWorker(workers, skiplock.WorkFunc[crawlArgs](func(ctx context.Context, j *skiplock.Job[crawlArgs]) error {
			started <- j.ID
			<-ctx.Done()
			return ctx.Err()
		}))
		client, err := skiplock.NewClient(open(t), &skiplock.Config{Workers: workers,
			Queues: map[string]skiplock.QueueConfig{"default": {}}, FetchPollInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		// The worker holds its job until its context ends: Stop would wait.
		t.Cleanup(func() { _ = client.StopAndCancel(context.Background()) })
		state := func(id int64) skiplock.JobState {
			t.Helper()
			j, err := client.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return j.State
		}
		insert := func(args skiplock.JobArgs, opts *skiplock.InsertOpts) int64 {
			t.Helper()
			res, err := client.Insert(ctx, args, opts)
			if err != nil {
				t.Fatal(err)
			}
			return res.Job.ID
		}
		running := insert(crawlArgs{}, nil)
		select {
		case got := <-started:
			if got != running {
				t.Fatalf("job %d started, want %d", got, running)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("the job did not start: %s", state(running))
		}
		held := &skiplock.InsertOpts{Queue: "held"}
		pending1, pending2 := insert(skiplock.RawArgs{KindName: "a"}, held), insert(skiplock.RawArgs{KindName: "a"}, held)
		scheduled := insert(skiplock.RawArgs{KindName: "a"}, &skiplock.InsertOpts{Queue: "held", RunAt: time.Now().Add(time.Hour)})
		other := insert(skiplock.RawArgs{KindName: "a"}, &skiplock.InsertOpts{Queue: "other"})
		ours := skiplock.BulkFilter{Queues: []string{"held", "default"}}
		bulk := func(p skiplock.BulkParams) skiplock.BulkResult {
			t.Helper()
			res, err := client.JobsBulk(ctx, p)
			if err != nil {
				t.Fatalf("JobsBulk(%+v): %v", p, err)
			}
			return res
		}
		if got := bulk(skiplock.BulkParams{Action: skiplock.BulkPause, Filter: ours, DryRun: true}); got != (skiplock.BulkResult{Matched: 4}) {
			t.Fatalf("pause, dry run: %+v", got)
		}
		if got := bulk(skiplock.BulkParams{Action: skiplock.BulkPause, Filter: ours, BatchSize: 3}); got != (skiplock.BulkResult{Matched: 4, Done: 4}) {
			t.Fatalf("pause: %+v", got)
		}
		for _, id := range []int64{pending1, pending2, scheduled} {
			if st := state(id); st != skiplock.StatePaused {
				t.Fatalf("job %d after the pause: %s", id, st)
			}
		}
		testwait.Until(t, 20*time.Second, "the running job paused", func() bool { return state(running) == skiplock.StatePaused })
		if st := state(other); st != skiplock.StatePending {
			t.Fatalf("a job outside the filter: %s", st)
		}
		if got := bulk(skiplock.BulkParams{Action: skiplock.BulkPause, Filter: ours}); got != (skiplock.BulkResult{}) {
			t.Fatalf("pause of paused jobs: %+v", got)
		}

		var ve *skiplock.ValidationError
		for _, p := range []skiplock.BulkParams{
			{Action: skiplock.BulkPause, Filter: skiplock.BulkFilter{States: []skiplock.JobState{skiplock.StatePaused}}},
			{Action: skiplock.BulkResume, Filter: skiplock.BulkFilter{States: []skiplock.JobState{skiplock.StatePending}}},
			{Action: skiplock.BulkPause, Filter: skiplock.BulkFilter{States: []skiplock.JobState{skiplock.StateCompleted}}},
		} {
			if _, err := client.JobsBulk(ctx, p); !errors.As(err, &ve) || ve.Field != "state" {
				t.Fatalf("%s of %v: %v, want a ValidationError on state", p.Action, p.Filter.States, err)
			}
		}
		if _, err := client.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkResume}); !errors.As(err, &ve) || ve.Field != "filter" {
			t.Fatalf("resume of every job: %v, want a ValidationError on filter", err)
		}

		if got := bulk(skiplock.BulkParams{Action: skiplock.BulkResume, Filter: ours}); got != (skiplock.BulkResult{Matched: 4, Done: 4}) {
			t.Fatalf("resume: %+v", got)
		}
		for id, want := range map[int64]skiplock.JobState{pending1: skiplock.StatePending, pending2: skiplock.StatePending,
			scheduled: skiplock.StateScheduled, other: skiplock.StatePending} {
			if st := state(id); st != want {
				t.Fatalf("job %d after the resume: %s, want %s", id, st, want)
			}
		}
		select {
		case got := <-started:
			if got != running {
				t.Fatalf("job %d started, want the resumed %d", got, running)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("the resumed job did not run again: %s", state(running))
		}
	})
}
