package skiplock_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
)

// TestJobsBulkSetEvents: a set-based bulk cancel sends the events the
// single cancel sends, one per job cancelled at once, across batches; a
// running job it asks to cancel has its context ended with ErrCancelled
// and ends cancelled when its worker returns.
func TestJobsBulkSetEvents(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, open func(t *testing.T) driver.Driver) {
		started, stopped := make(chan int64, 1), make(chan error, 1)
		workers := skiplock.NewWorkers()
		skiplock.MustAddWorker(workers, skiplock.WorkFunc[crawlArgs](func(ctx context.Context, j *skiplock.Job[crawlArgs]) error {
			started <- j.ID
			<-ctx.Done()
			stopped <- context.Cause(ctx)
			return ctx.Err()
		}))
		client, err := skiplock.NewClient(open(t), &skiplock.Config{Workers: workers,
			Queues: map[string]skiplock.QueueConfig{"default": {}}, FetchPollInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		events, unsubscribe := client.Subscribe(skiplock.EventJobCancelled)
		defer unsubscribe()
		if err := client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.StopAndCancel(context.Background()) })
		res, err := client.Insert(ctx, crawlArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		running := res.Job.ID
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			t.Fatal("the job did not start")
		}
		want := map[int64]bool{running: true}
		for range 5 {
			r, err := client.Insert(ctx, skiplock.RawArgs{KindName: "a"}, &skiplock.InsertOpts{Queue: "held"})
			if err != nil {
				t.Fatal(err)
			}
			want[r.Job.ID] = true
		}
		got, err := client.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkCancel, BatchSize: 2,
			Filter: skiplock.BulkFilter{Queues: []string{"held", "default"}}})
		if err != nil || got != (skiplock.BulkResult{Matched: 6, Done: 6}) {
			t.Fatalf("cancel: %+v, %v", got, err)
		}
		select {
		case cause := <-stopped:
			if !errors.Is(cause, skiplock.ErrCancelled) {
				t.Fatalf("running job stopped by %v, want ErrCancelled", cause)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the running job was not stopped")
		}
		deadline := time.After(30 * time.Second)
		for len(want) > 0 {
			select {
			case ev := <-events:
				if ev.Job.State != skiplock.StateCancelled || !want[ev.Job.ID] {
					t.Fatalf("event %s for job %d (%s)", ev.Kind, ev.Job.ID, ev.Job.State)
				}
				delete(want, ev.Job.ID)
			case <-deadline:
				t.Fatalf("no cancelled event for jobs %v", want)
			}
		}
	})
}

// TestJobsBulkStopsWithContext: a bulk action whose context ends stops
// before its next batch; the jobs of the batches done are done, the others
// untouched, and the error says how many were done.
func TestJobsBulkStopsWithContext(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	ids := insertInQueue(t, b.ctx, b.client, "held", 5)
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	res, err := b.client.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkPause, BatchSize: 2,
		Filter: skiplock.BulkFilter{Queues: []string{"held"}}, Progress: func(int) { cancel() }})
	if !errors.Is(err, context.Canceled) || res.Done != 2 || res.Matched != 2 {
		t.Fatalf("cancelled bulk: %+v, %v; want 2 done and context.Canceled", res, err)
	}
	for i, id := range ids {
		j, err := b.client.JobGet(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]skiplock.JobState{true: skiplock.StatePaused, false: skiplock.StatePending}[i < 2]; j.State != want {
			t.Fatalf("job %d: %s, want %s", i, j.State, want)
		}
	}
}

// TestJobsBulkActsOnPagesABatchAtATime: a bulk action selects its jobs a
// page of whole batches at a time and acts on them a batch at a time, the
// last batch short: every job is acted on once, and progress is heard
// after each batch.
func TestJobsBulkActsOnPagesABatchAtATime(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, open func(t *testing.T) driver.Driver) {
		client, ctx := bulkClient(t, open), t.Context()
		jobs := make([]skiplock.InsertManyParams, 2500)
		for i := range jobs {
			jobs[i] = skiplock.InsertManyParams{Args: skiplock.RawArgs{KindName: "a"}, Opts: &skiplock.InsertOpts{Queue: "held"}}
		}
		if _, err := client.InsertMany(ctx, jobs); err != nil {
			t.Fatal(err)
		}
		held := skiplock.BulkFilter{Queues: []string{"held"}}
		var heard []int
		got, err := client.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkPause, BatchSize: 300, Filter: held,
			Progress: func(n int) { heard = append(heard, n) }})
		if err != nil || got != (skiplock.BulkResult{Matched: 2500, Done: 2500}) {
			t.Fatalf("pause: %+v, %v; want 2500 matched and done", got, err)
		}
		if want := []int{300, 600, 900, 1200, 1500, 1800, 2100, 2400, 2500}; !slices.Equal(heard, want) {
			t.Fatalf("progress %v, want %v", heard, want)
		}
		paused, err := client.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkResume, Filter: held, DryRun: true})
		if err != nil || paused.Matched != 2500 {
			t.Fatalf("paused jobs counted: %+v, %v; want 2500", paused, err)
		}
	})
}

// TestJobsBulkNarrowedByStateActsOnWhatMatchesNow: a bulk action whose
// filter names fewer states than the action acts on checks them again as
// each batch acts: a job picked as paused and resumed before its batch is
// not cancelled as paused; one paused after its page was picked is passed
// over.
func TestJobsBulkNarrowedByStateActsOnWhatMatchesNow(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, open func(t *testing.T) driver.Driver) {
		client, ctx := bulkClient(t, open), t.Context()
		ids := insertInQueue(t, ctx, client, "held", 6)
		for _, id := range ids[:4] {
			if _, err := client.JobPause(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		_, err := client.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkCancel, BatchSize: 2,
			Filter: skiplock.BulkFilter{Queues: []string{"held"}, States: []skiplock.JobState{skiplock.StatePaused}},
			Progress: afterFirstBatch(func() {
				if _, err := client.JobResume(ctx, ids[3]); err != nil {
					t.Error(err)
				}
				if _, err := client.JobPause(ctx, ids[4]); err != nil {
					t.Error(err)
				}
			})})
		if err != nil {
			t.Fatal(err)
		}
		// Job 3, resumed before its batch, left the filter and stays
		// pending; job 4, paused after the page was picked, came to match
		// too late and is passed over.
		want := []skiplock.JobState{skiplock.StateCancelled, skiplock.StateCancelled, skiplock.StateCancelled,
			skiplock.StatePending, skiplock.StatePaused, skiplock.StatePending}
		for i, id := range ids {
			j, err := client.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if j.State != want[i] {
				t.Errorf("job %d: %s, want %s", i, j.State, want[i])
			}
		}
	})
}

// TestJobsBulkDeleteOlderThanLeavesAJobFinishedAgain: a job picked for a
// delete of what finished over a given age ago, retried and finished again
// before its batch, is too young by then and stays.
func TestJobsBulkDeleteOlderThanLeavesAJobFinishedAgain(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, open func(t *testing.T) driver.Driver) {
		client, ctx := bulkClient(t, open), t.Context()
		ids := insertInQueue(t, ctx, client, "old", 4)
		for _, id := range ids {
			if _, err := client.JobCancel(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Millisecond) // every job finished over 1 ms ago
		res, err := client.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkDelete, BatchSize: 2,
			Filter: skiplock.BulkFilter{Queues: []string{"old"}, OlderThan: time.Millisecond},
			Progress: afterFirstBatch(func() {
				if _, err := client.JobRetry(ctx, ids[3]); err != nil {
					t.Error(err)
				}
				if _, err := client.JobCancel(ctx, ids[3]); err != nil {
					t.Error(err)
				}
			})})
		if err != nil {
			t.Fatal(err)
		}
		if res.Matched != 4 || res.Done != 3 {
			t.Errorf("matched %d, deleted %d; want 4 and 3", res.Matched, res.Done)
		}
		for i, id := range ids {
			_, err := client.JobGet(ctx, id)
			if gone := errors.Is(err, skiplock.ErrNotFound); gone != (i < 3) {
				t.Errorf("job %d: JobGet answers %v", i, err)
			}
		}
	})
}

// insertInQueue inserts n jobs of kind "a" in queue and answers their ids.
func insertInQueue(t *testing.T, ctx context.Context, client *skiplock.Client, queue string, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		r, err := client.Insert(ctx, skiplock.RawArgs{KindName: "a"}, &skiplock.InsertOpts{Queue: queue})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = r.Job.ID
	}
	return ids
}

// afterFirstBatch is a bulk action's Progress that runs fn once, after the
// first batch.
func afterFirstBatch(fn func()) func(int) {
	first := true
	return func(int) {
		if first {
			first = false
			fn()
		}
	}
}

// bulkClient is a client on open's driver that works no queue.
func bulkClient(t *testing.T, open func(t *testing.T) driver.Driver) *skiplock.Client {
	t.Helper()
	client, err := skiplock.NewClient(open(t), &skiplock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return client
}
