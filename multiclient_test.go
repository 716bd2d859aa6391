package skiplock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// counter records how often each job ran.
type counter struct {
	mu   sync.Mutex
	runs map[int64]int
}

func (c *counter) work(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
	c.mu.Lock()
	c.runs[j.ID]++
	c.mu.Unlock()
	return nil
}

// eachRanOnce fails t unless total jobs completed, each on its first
// attempt, and each ran once; what says what else happened meanwhile.
func (c *counter) eachRanOnce(t *testing.T, drv *pgdriver.Driver, total int, what string) {
	t.Helper()
	var completed int
	if err := drv.Pool().QueryRow(t.Context(), `SELECT count(*) FROM skiplock_jobs_archive WHERE state = 'completed' AND attempt = 1`).Scan(&completed); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if completed != total || len(c.runs) != total {
		t.Fatalf("completed %d, ran %d distinct jobs, want %d %s", completed, len(c.runs), total, what)
	}
	for id, n := range c.runs {
		if n != 1 {
			t.Fatalf("job %d ran %d times %s", id, n, what)
		}
	}
}

// everyFewMs runs fn every 5 ms until the answered stop is called (or the
// test ends), which answers fn's first error; that error also fails t at
// once, so that a test waiting on what fn does says why it waits in vain.
func everyFewMs(t *testing.T, fn func() error) (stop func() error) {
	quit := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-quit:
				done <- nil
				return
			case <-time.After(5 * time.Millisecond):
			}
			if err := fn(); err != nil {
				t.Errorf("every 5 ms: %v", err)
				done <- err
				return
			}
		}
	}()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			close(quit)
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func startClients(t *testing.T, n int, url string, work skiplock.WorkFunc[sleepArgs]) []*skiplock.Client {
	t.Helper()
	var clients []*skiplock.Client
	for i := range n {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		workers := skiplock.NewWorkers()
		skiplock.MustAddWorker(workers, work)
		c, err := skiplock.NewClient(pgdriverNew(pool), &skiplock.Config{
			ID: "client-" + string(rune('a'+i)), Workers: workers,
			Queues:            map[string]skiplock.QueueConfig{"default": {MaxWorkers: 20}},
			FetchPollInterval: 50 * time.Millisecond, RescueInterval: 200 * time.Millisecond, LeaderTTL: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Stop(context.Background()) })
		clients = append(clients, c)
	}
	return clients
}

// Ten thousand jobs through four clients on one database: every job
// completes, each runs once, and the hot table ends empty.
func TestManyClientsRunEachJobOnce(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	cnt := &counter{runs: map[int64]int{}}
	admin, _ := skiplock.NewClient(drv, nil)
	const total = 10000
	params := make([]skiplock.InsertManyParams, total)
	for i := range params {
		params[i] = skiplock.InsertManyParams{Args: sleepArgs{N: i}}
	}
	ctx := context.Background()
	ids, err := admin.InsertMany(ctx, params)
	if err != nil || len(ids) != total {
		t.Fatalf("insert: %d ids, %v", len(ids), err)
	}
	startClients(t, 4, url, cnt.work)
	deadline := time.Now().Add(90 * time.Second)
	for {
		var live int
		if err := drv.Pool().QueryRow(ctx, `SELECT count(*) FROM skiplock_jobs`).Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still live", live)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cnt.eachRanOnce(t, drv, total, "")
}

// A worker that claims and then goes silent loses the job to the rescuer;
// another worker completes it, and the silent worker's late report is
// refused.
func TestSilentWorkerIsRescuedAndFenced(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := context.Background()
	admin, _ := skiplock.NewClient(drv, nil)
	res, err := admin.Insert(ctx, sleepArgs{N: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := admin.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "ghost", Max: 1, Lease: time.Second})
	if err != nil || len(claimed) != 1 || claimed[0].ID != res.Job.ID {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	cnt := &counter{runs: map[int64]int{}}
	startClients(t, 1, url, cnt.work)
	b := &testBundle{drv: drv, client: admin, ctx: ctx}
	j := waitState(t, b, res.Job.ID, skiplock.StateCompleted)
	if j.Attempt != 2 || len(j.Errors) != 1 || j.Errors[0].Type != "lease_expired" {
		t.Fatalf("job %+v", j)
	}
	if _, _, err := admin.Complete(ctx, res.Job.ID, skiplock.CompleteParams{WorkerID: "ghost"}); !errors.Is(err, skiplock.ErrLeaseLost) {
		t.Fatalf("late complete: %v", err)
	}
	if _, err := admin.Fail(ctx, res.Job.ID, skiplock.FailParams{WorkerID: "ghost", Message: "late"}); !errors.Is(err, skiplock.ErrLeaseLost) {
		t.Fatalf("late fail: %v", err)
	}
	if _, err := admin.Heartbeat(ctx, res.Job.ID, skiplock.HeartbeatParams{WorkerID: "ghost"}); !errors.Is(err, skiplock.ErrLeaseLost) {
		t.Fatalf("late heartbeat: %v", err)
	}
	after, _ := admin.JobGet(ctx, res.Job.ID)
	if after.State != skiplock.StateCompleted || len(after.Errors) != 1 {
		t.Fatalf("late reports changed the job: %+v", after)
	}
	// The leader counted the rescue where every process's metrics read it.
	testwait.Until(t, 30*time.Second, "the rescue counted", func() bool {
		m, err := admin.Metrics(ctx)
		return err == nil && m.Rescued["requeued"] == 1 && m.Rescued["failed"] == 0
	})
}

// A lease that runs out with no retries left fails the job.
func TestExpiredLeaseWithoutRetriesFails(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	ctx := context.Background()
	admin, _ := skiplock.NewClient(drv, &skiplock.Config{RescueInterval: 100 * time.Millisecond, LeaderTTL: time.Second})
	res, _ := admin.Insert(ctx, sleepArgs{}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(0)})
	if _, err := admin.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "ghost", Max: 1, Lease: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Start(ctx); err != nil { // maintenance only
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Stop(ctx) })
	j := waitState(t, &testBundle{drv: drv, client: admin, ctx: ctx}, res.Job.ID, skiplock.StateFailed)
	if j.Errors[0].Message != "lease expired" || j.Errors[0].Retryable {
		t.Fatalf("errors %+v", j.Errors)
	}
}
