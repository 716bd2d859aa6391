package skiplock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

type sleepArgs struct {
	N int `json:"n"`
}

func (sleepArgs) Kind() string { return "sleep" }

// testBundle is what a client test needs.
type testBundle struct {
	drv    driver.Driver
	client *skiplock.Client
	ctx    context.Context
}

func setup(t *testing.T, work func(context.Context, *skiplock.Job[sleepArgs]) error, mod func(*skiplock.Config)) *testBundle {
	t.Helper()
	drv, _ := pgtest.Schema(t)
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](work))
	cfg := &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 10}}, Workers: workers,
		FetchPollInterval: 50 * time.Millisecond, RescueInterval: 100 * time.Millisecond,
		SchedulerInterval: 50 * time.Millisecond, LeaderTTL: time.Second}
	if mod != nil {
		mod(cfg)
	}
	client, err := skiplock.NewClient(drv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &testBundle{drv: drv, client: client, ctx: ctx}
}

func (b *testBundle) start(t *testing.T) {
	t.Helper()
	if err := b.client.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.client.Stop(context.Background()) })
}

// waitState polls until the job reaches state or the test times out.
func waitState(t *testing.T, b *testBundle, id int64, state skiplock.JobState) *skiplock.JobRow {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := b.client.JobGet(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == state {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: state %s, want %s (errors %+v)", id, j.State, state, j.Errors)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestInsertWorkComplete(t *testing.T) {
	t.Parallel()
	var got atomic.Int64
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		got.Add(int64(j.Args.N))
		return j.SetResult(map[string]int{"doubled": j.Args.N * 2})
	}, nil)
	b.start(t)
	res, err := b.client.Insert(b.ctx, sleepArgs{N: 21}, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateCompleted)
	if got.Load() != 21 || string(j.Result) != `{"doubled": 42}` || j.Attempt != 1 || j.FinishedAt == nil {
		t.Fatalf("job %+v, worker saw %d", j, got.Load())
	}
}

func TestRetryThenFail(t *testing.T) {
	t.Parallel()
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		return errors.New("boom")
	}, func(c *skiplock.Config) { c.Backoff = func(int) time.Duration { return 10 * time.Millisecond } })
	b.start(t)
	res, err := b.client.Insert(b.ctx, sleepArgs{}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(2)})
	if err != nil {
		t.Fatal(err)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateFailed)
	if j.Attempt != 3 || len(j.Errors) != 3 || j.Errors[2].Retryable || j.Errors[0].Message != "boom" {
		t.Fatalf("job %+v", j)
	}
}
