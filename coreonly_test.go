package skiplock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// coreDriver hides every optional store of the driver it wraps: it is the
// core contract a third database could implement alone.
type coreDriver struct{ driver.Driver }

// A client on a driver with the core contract only works jobs (retries,
// failures that cancel dependents), and answers ErrUnsupported for what
// needs an optional store.
func TestClientOnCoreOnlyDriver(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		switch {
		case j.Args.N < 0:
			return skiplock.Permanent(errors.New("bad input"))
		case calls.Add(1) == 1:
			return errors.New("first attempt fails")
		}
		return nil
	}))
	client, err := skiplock.NewClient(coreDriver{sqlitetest.New(t)}, &skiplock.Config{
		Queues:  map[string]skiplock.QueueConfig{"default": {MaxWorkers: 2}},
		Workers: workers, FetchPollInterval: 20 * time.Millisecond, SchedulerInterval: 20 * time.Millisecond,
		RescueInterval: 100 * time.Millisecond, LeaderTTL: time.Second,
		Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{client: client, ctx: t.Context()}
	b.start(t)
	retried, err := client.Insert(b.ctx, sleepArgs{N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	parent, err := client.Insert(b.ctx, sleepArgs{N: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	child, err := client.Insert(b.ctx, sleepArgs{N: 2}, &skiplock.InsertOpts{DependsOn: []int64{parent.Job.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if j := waitState(t, b, retried.Job.ID, skiplock.StateCompleted); j.Attempt != 2 || len(j.Errors) != 1 {
		t.Fatalf("retried job %+v", j)
	}
	waitState(t, b, parent.Job.ID, skiplock.StateFailed)
	waitState(t, b, child.Job.ID, skiplock.StateCancelled)
	if _, err := client.JobList(b.ctx, skiplock.JobListParams{}); !errors.Is(err, skiplock.ErrUnsupported) {
		t.Fatalf("JobList: err %v, want ErrUnsupported", err)
	}
	if _, err := client.ScheduleList(b.ctx, nil); !errors.Is(err, skiplock.ErrUnsupported) {
		t.Fatalf("ScheduleList: err %v, want ErrUnsupported", err)
	}
}
