package skiplock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// beginOutageDriver is a database whose transactions cannot begin while
// it is down, as when its server is unreachable; refused counts the
// attempts.
type beginOutageDriver struct {
	driver.Driver
	down    atomic.Bool
	refused atomic.Int64
}

func (d *beginOutageDriver) Begin(ctx context.Context) (driver.ExecutorTx, error) {
	if d.down.Load() {
		d.refused.Add(1)
		return nil, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	return d.Driver.Begin(ctx)
}

// A handler that errors while the database is unreachable still gets its
// failure recorded once the database is back, retried as a completion is,
// without waiting for its lease (five minutes here) to run out: the job
// is retried at once and its second attempt completes.
func TestFailureRecordedAfterOutage(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			drv := &beginOutageDriver{Driver: open(t)}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			started, release := make(chan struct{}, 1), make(chan struct{})
			work := func(_ context.Context, j *skiplock.Job[sleepArgs]) error {
				if j.Attempt > 1 {
					return nil
				}
				started <- struct{}{}
				<-release
				return errors.New("upstream said no")
			}
			workers := skiplock.NewWorkers()
			skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](work))
			client, err := skiplock.NewClient(drv, &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 2}},
				Workers: workers, FetchPollInterval: 50 * time.Millisecond, Lease: 5 * time.Minute,
				Backoff: func(int) time.Duration { return 0 }})
			if err != nil {
				t.Fatal(err)
			}
			if err := client.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = client.Stop(context.Background()) }()
			res, err := client.Insert(ctx, sleepArgs{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			<-started
			drv.down.Store(true)
			before := drv.refused.Load()
			close(release)
			testwait.Until(t, 20*time.Second, "the failure report refused twice", func() bool { return drv.refused.Load() >= before+2 })
			if j, err := drv.Driver.JobGet(ctx, res.Job.ID); err != nil || j.State != skiplock.StateRunning || len(j.Errors) != 0 {
				t.Fatalf("during the outage: %+v, %v, want the job running with no error recorded", j, err)
			}
			drv.down.Store(false)
			testwait.Until(t, 30*time.Second, "the failure recorded and the job retried", func() bool {
				j, err := drv.Driver.JobGet(ctx, res.Job.ID)
				return err == nil && j.State == skiplock.StateCompleted
			})
			j, err := drv.Driver.JobGet(ctx, res.Job.ID)
			if err != nil || j.Attempt != 2 || len(j.Errors) != 1 || j.Errors[0].Message != "upstream said no" {
				t.Fatalf("after the outage: %+v, %v, want attempt 2 with the first attempt's error", j, err)
			}
		})
	}
}

// Stop honours its context while a failure report waits for the database:
// the report is given up (the job runs again after its lease) and no
// goroutine stays. Not parallel: goleak sees every goroutine.
func TestStopWhileFailureReportRetries(t *testing.T) {
	drv := &beginOutageDriver{Driver: sqlitetest.New(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ignore := goleak.IgnoreCurrent()
	started := make(chan struct{}, 1)
	client := lifecycleClient(t, drv, func(context.Context, *skiplock.Job[sleepArgs]) error {
		started <- struct{}{}
		return errors.New("upstream said no")
	})
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	drv.down.Store(true)
	if _, err := drv.Driver.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "sleep", Queue: "default", Priority: 5, MaxRetries: 3}}); err != nil {
		t.Fatal(err)
	}
	<-started
	testwait.Until(t, 20*time.Second, "the failure report refused twice", func() bool { return drv.refused.Load() >= 2 })
	stopCtx, stopCancel := context.WithTimeout(context.Background(), time.Second)
	defer stopCancel()
	stopped := make(chan error, 1)
	go func() { stopped <- client.Stop(stopCtx) }()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop during an outage: %v, want an error wrapping context.DeadlineExceeded", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stop(ctx with a 1s timeout) still blocked 20s later: the failure report holds it")
	}
	goleak.VerifyNone(t, ignore)
}

// A worker's error whose text holds a NUL (which PostgreSQL stores in no
// text or JSON) is recorded at once, the NUL replaced by U+FFFD, not
// retried in vain until the job's lease runs out.
func TestFailureMessageWithNUL(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			drv := open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := lifecycleClient(t, drv, func(context.Context, *skiplock.Job[sleepArgs]) error {
				return skiplock.Permanent(errors.New("upstream said \x00no"))
			})
			if err := client.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = client.Stop(context.Background()) }()
			res, err := client.Insert(ctx, sleepArgs{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, 20*time.Second, "the failure recorded", func() bool {
				j, err := client.JobGet(ctx, res.Job.ID)
				return err == nil && j.State == skiplock.StateFailed
			})
			j, err := client.JobGet(ctx, res.Job.ID)
			if err != nil || len(j.Errors) != 1 || j.Errors[0].Message != "permanent: upstream said \uFFFDno" {
				t.Fatalf("recorded %+v, %v", j, err)
			}
		})
	}
}
