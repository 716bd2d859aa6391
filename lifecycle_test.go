package skiplock_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// lifecycleDrivers are the databases the lifecycle tests run on.
var lifecycleDrivers = map[string]func(t *testing.T) driver.Driver{
	"sqlite":   func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
	"postgres": func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d },
}

// lifecycleClient is a client working sleepArgs jobs with work.
func lifecycleClient(t *testing.T, drv driver.Driver, work func(context.Context, *skiplock.Job[sleepArgs]) error) *skiplock.Client {
	t.Helper()
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](work))
	c, err := skiplock.NewClient(drv, &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 4}},
		Workers: workers, FetchPollInterval: 50 * time.Millisecond, RescueInterval: 100 * time.Millisecond,
		SchedulerInterval: 50 * time.Millisecond, LeaderTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Not parallel: goleak sees every goroutine of the process. The database's
// own (pool, connection opener) exist before IgnoreCurrent and stay.
func TestStopLeavesNoGoroutine(t *testing.T) {
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			drv := open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// A client that only inserts; its wake-ups leave by Stop.
			inserter := lifecycleClient(t, drv, func(context.Context, *skiplock.Job[sleepArgs]) error { return nil })
			ignore := goleak.IgnoreCurrent()
			var done atomic.Int64
			worker := lifecycleClient(t, drv, func(context.Context, *skiplock.Job[sleepArgs]) error {
				done.Add(1)
				return nil
			})
			if err := worker.Start(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				if _, err := inserter.Insert(ctx, sleepArgs{N: i}, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := worker.Insert(ctx, sleepArgs{N: i}, nil); err != nil {
					t.Fatal(err)
				}
			}
			testwait.Until(t, 20*time.Second, "40 jobs done", func() bool { return done.Load() == 40 })
			if err := inserter.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if err := worker.Stop(ctx); err != nil {
				t.Fatal(err)
			}

			// StopAndCancel with a job running, then Stop again.
			started := make(chan struct{}, 1)
			canceller := lifecycleClient(t, drv, func(ctx context.Context, _ *skiplock.Job[sleepArgs]) error {
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			})
			if err := canceller.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := canceller.Insert(ctx, sleepArgs{}, nil); err != nil {
				t.Fatal(err)
			}
			<-started
			if err := canceller.StopAndCancel(ctx); err != nil {
				t.Fatal(err)
			}
			if err := canceller.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			goleak.VerifyNone(t, ignore)
		})
	}
}

// outageDriver is a database whose completions hang while it is down, as
// statements do when the server is unreachable.
type outageDriver struct {
	driver.Driver
	down atomic.Bool
}

func (d *outageDriver) JobCompleteMany(ctx context.Context, jobs []driver.CompleteParams) ([]driver.CompletedJob, error) {
	if d.down.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return d.Driver.JobCompleteMany(ctx, jobs)
}

// Stop honours its context while the database is down, with the workers
// held back by a full completion queue; the jobs whose completions did not
// reach the database run again once their leases expire.
func TestStopDuringOutageHonoursContext(t *testing.T) {
	drv := &outageDriver{Driver: sqlitetest.New(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ignore := goleak.IgnoreCurrent()
	var runs atomic.Int64
	work := func(context.Context, *skiplock.Job[sleepArgs]) error { runs.Add(1); return nil }
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](work))
	cfg := &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 10}}, Workers: workers,
		FetchPollInterval: 50 * time.Millisecond, RescueInterval: 100 * time.Millisecond, LeaderTTL: time.Second,
		Lease: time.Second, CompleterBatchSize: 1}
	client, err := skiplock.NewClient(drv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	drv.down.Store(true)
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20
	ids := make([]int64, n)
	for i := range ids {
		res, err := client.Insert(ctx, sleepArgs{N: i}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = res.Job.ID
	}
	testwait.Until(t, 20*time.Second, "every worker busy", func() bool { return runs.Load() >= 10 })

	stopped := make(chan error, 1)
	go func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		stopped <- client.Stop(stopCtx)
	}()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop during an outage: %v, want an error wrapping context.DeadlineExceeded", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stop(ctx with a 2s timeout) still blocked 20s later: the completer holds it")
	}
	goleak.VerifyNone(t, ignore)

	// The database is back: another client rescues and completes every job.
	drv.down.Store(false)
	again, err := skiplock.NewClient(drv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = again.Stop(context.Background()) }()
	for _, id := range ids {
		testwait.Until(t, 20*time.Second, "job completed after the outage", func() bool {
			j, err := again.JobGet(ctx, id)
			return err == nil && j.State == skiplock.StateCompleted
		})
	}
}

// A job cancelled while it runs records its attempt as cancelled, not to
// be retried.
func TestCancelledJobRecordsCancelled(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	b := setup(t, func(ctx context.Context, _ *skiplock.Job[sleepArgs]) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}, nil)
	b.start(t)
	res, err := b.client.Insert(b.ctx, sleepArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if _, err := b.client.JobCancel(b.ctx, res.Job.ID); err != nil {
		t.Fatal(err)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateCancelled)
	if len(j.Errors) != 1 {
		t.Fatalf("errors %+v, want one", j.Errors)
	}
	if e := j.Errors[0]; e.Type != "cancelled" || e.Retryable {
		t.Fatalf("error type %q retryable %v, want \"cancelled\" and false", e.Type, e.Retryable)
	}
}

// notifyFailDriver fails every wake-up sent inside a caller's transaction.
type notifyFailDriver struct{ driver.Driver }

type notifyFailExec struct{ driver.Executor }

func (notifyFailExec) QueueNotify(context.Context, []string) error {
	return errors.New("notify refused")
}

func (d notifyFailDriver) UnwrapTx(tx any) (driver.Executor, error) {
	exec, err := d.Driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	return notifyFailExec{exec}, nil
}

// A wake-up that fails in the caller's transaction reaches the caller.
func TestInsertTxReportsFailedNotify(t *testing.T) {
	t.Parallel()
	sq := sqlitetest.New(t)
	client, err := skiplock.NewClient(notifyFailDriver{sq}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tx, err := sq.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := client.InsertTx(ctx, tx, sleepArgs{}, nil); err == nil || !strings.Contains(err.Error(), "notify refused") {
		t.Fatalf("InsertTx with a failing NOTIFY: %v, want the failure", err)
	}
}
