package skiplock_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// bothDrivers runs fn on a fresh PostgreSQL schema and a fresh SQLite file.
func bothDrivers(t *testing.T, fn func(t *testing.T, open func(t *testing.T) driver.Driver)) {
	for name, open := range map[string]func(t *testing.T) driver.Driver{
		"postgres": func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d },
		"sqlite":   func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, open)
		})
	}
}

type crawlArgs struct{}

func (crawlArgs) Kind() string { return "crawl" }

type page struct {
	Page int `json:"page"`
}

// TestPauseRunningJobResumesFromCheckpoint: a running job asked to pause
// has its context ended with ErrPaused, goes to paused with its checkpoint
// and its attempt unspent, and resumed, continues from the checkpoint.
func TestPauseRunningJobResumesFromCheckpoint(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, open func(t *testing.T) driver.Driver) {
		started := make(chan struct{}, 1)
		causes := make(chan error, 1)
		resumedAt := make(chan int, 1)
		workers := skiplock.NewWorkers()
		skiplock.MustAddWorker(workers, skiplock.WorkFunc[crawlArgs](func(ctx context.Context, j *skiplock.Job[crawlArgs]) error {
			var p page
			if ok, err := j.LoadCheckpoint(&p); err != nil {
				return err
			} else if ok {
				resumedAt <- p.Page
				return nil
			}
			if err := j.SaveCheckpoint(ctx, page{Page: 7}); err != nil {
				return err
			}
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
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
		t.Cleanup(func() { _ = client.Stop(context.Background()) })
		res, err := client.Insert(ctx, crawlArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := res.Job.ID
		<-started
		j, err := client.JobPause(ctx, id)
		if err != nil || j.State != skiplock.StateRunning {
			t.Fatalf("pause a running job: %+v, %v; want it running, asked to pause", j, err)
		}
		if cause := <-causes; !errors.Is(cause, skiplock.ErrPaused) {
			t.Fatalf("context cause %v, want ErrPaused", cause)
		}
		var paused *skiplock.JobRow
		testwait.Until(t, 20*time.Second, "the job paused", func() bool {
			paused, err = client.JobGet(ctx, id)
			return err == nil && paused.State == skiplock.StatePaused
		})
		var cp page
		if paused.Attempt != 0 || len(paused.Errors) != 0 || json.Unmarshal(paused.Checkpoint, &cp) != nil || cp.Page != 7 {
			t.Fatalf("paused job: attempt %d errors %+v checkpoint %s", paused.Attempt, paused.Errors, paused.Checkpoint)
		}
		if _, err := client.JobResume(ctx, id); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-resumedAt:
			if p != 7 {
				t.Fatalf("resumed at page %d, want 7", p)
			}
		case <-time.After(60 * time.Second):
			j, err := client.JobGet(ctx, id)
			t.Fatalf("the resumed job did not run from its checkpoint: %+v, %v", j, err)
		}
		testwait.Until(t, 20*time.Second, "the job completed", func() bool {
			j, err := client.JobGet(ctx, id)
			return err == nil && j.State == skiplock.StateCompleted && j.Attempt == 1
		})
		// A finished job cannot pause.
		if _, err := client.JobPause(ctx, id); !errors.Is(err, skiplock.ErrWrongState) {
			t.Fatalf("pause a completed job: %v, want ErrWrongState", err)
		}
	})
}

// TestStopRequestsReachAnotherClient: on PostgreSQL a cancel and a pause
// asked by one client reach jobs running in another (a pool of its own, as
// another process), whose heartbeat is an hour away: NOTIFY carries them.
// On SQLite every process looks for them each second
// (sqlitedriver's TestStopRequestsCrossProcesses).
func TestStopRequestsReachAnotherClient(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := t.Context()
	causes := make(chan error, 2)
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[holdArgs](func(ctx context.Context, _ *skiplock.Job[holdArgs]) error {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return context.Cause(ctx)
	}))
	runner, err := skiplock.NewClient(pgtest.Open(t, url), &skiplock.Config{Workers: workers,
		Queues: map[string]skiplock.QueueConfig{"default": {}}, FetchPollInterval: 50 * time.Millisecond,
		Lease: 2 * time.Hour, HeartbeatInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// A failure below leaves jobs waiting for a stop that never came:
	// cancel them rather than wait on them for ever.
	t.Cleanup(func() { _ = runner.StopAndCancel(context.Background()) })
	admin, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 2 {
		res, err := admin.Insert(ctx, holdArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Job.ID)
	}
	state := func(id int64) skiplock.JobState {
		j, err := admin.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j.State
	}
	testwait.Until(t, 30*time.Second, "both jobs running", func() bool {
		return state(ids[0]) == skiplock.StateRunning && state(ids[1]) == skiplock.StateRunning
	})
	if _, err := admin.JobCancel(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.JobPause(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	got := map[error]bool{}
	for range 2 {
		select {
		case cause := <-causes:
			got[cause] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("the running jobs' contexts did not end: causes so far %v", got)
		}
	}
	if !got[skiplock.ErrCancelled] || !got[skiplock.ErrPaused] {
		t.Fatalf("causes %v, want ErrCancelled and ErrPaused", got)
	}
	testwait.Until(t, 30*time.Second, "the jobs cancelled and paused", func() bool {
		return state(ids[0]) == skiplock.StateCancelled && state(ids[1]) == skiplock.StatePaused
	})
}
