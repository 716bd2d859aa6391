package skiplock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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
	drv    driver.FullDriver
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

func TestManualRetryKeepsHistory(t *testing.T) {
	t.Parallel()
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		if j.Args.N == 0 {
			return skiplock.Permanent(errors.New("bad input"))
		}
		return nil
	}, nil)
	b.start(t)
	res, err := b.client.Insert(b.ctx, sleepArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateFailed)
	if j.Attempt != 1 || len(j.Errors) != 1 || j.Errors[0].Retryable {
		t.Fatalf("permanent error should fail at once: %+v", j)
	}
	j, err = b.client.JobRetry(b.ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != skiplock.StatePending || j.Attempt != 1 || j.MaxRetries != 4 || len(j.Errors) != 1 {
		t.Fatalf("after retry: %+v; want attempt 1 and max_retries 4", j)
	}
	j = waitState(t, b, j.ID, skiplock.StateFailed)
	if len(j.Errors) != 2 || j.Errors[1].Attempt != 2 {
		t.Fatalf("history not kept, or the retried run not attempt 2: %+v", j.Errors)
	}
	if _, err := b.client.JobRetry(b.ctx, 999999); !errors.Is(err, skiplock.ErrNotFound) {
		t.Fatalf("retry of a missing job: %v", err)
	}
}

func TestSnoozeDoesNotSpendRetry(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		if calls.Add(1) <= 3 {
			return skiplock.Snooze(10 * time.Millisecond)
		}
		return nil
	}, nil)
	b.start(t)
	res, err := b.client.Insert(b.ctx, sleepArgs{}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(0)})
	if err != nil {
		t.Fatal(err)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateCompleted)
	if calls.Load() != 4 || j.Attempt != 1 || len(j.Errors) != 0 {
		t.Fatalf("calls %d, job %+v", calls.Load(), j)
	}
}

func TestPanicIsRecordedWithStack(t *testing.T) {
	t.Parallel()
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		panic("worker exploded")
	}, nil)
	b.start(t)
	res, err := b.client.Insert(b.ctx, sleepArgs{}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(0)})
	if err != nil {
		t.Fatal(err)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateFailed)
	e := j.Errors[0]
	if e.Type != "panic" || e.Message != "panic: worker exploded" || e.Stack == "" || e.Attempt != 1 {
		t.Fatalf("error %+v", e)
	}
}

func TestTimeoutCancelsContext(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		<-ctx.Done()
		return ctx.Err()
	}), skiplock.WorkerOpts{Timeout: 50 * time.Millisecond})
	client, err := skiplock.NewClient(drv, &skiplock.Config{Workers: workers,
		Queues: map[string]skiplock.QueueConfig{"default": {}}, FetchPollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{drv: drv, client: client, ctx: context.Background()}
	b.start(t)
	res, err := client.Insert(b.ctx, sleepArgs{}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(0)})
	if err != nil {
		t.Fatal(err)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateFailed)
	if j.Errors[0].Type != "timeout" {
		t.Fatalf("error %+v", j.Errors[0])
	}
}

func TestScheduledJobIsPromoted(t *testing.T) {
	t.Parallel()
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error { return nil }, nil)
	b.start(t)
	res, err := b.client.Insert(b.ctx, sleepArgs{}, &skiplock.InsertOpts{Delay: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.State != skiplock.StateScheduled {
		t.Fatalf("state %s, want scheduled", res.Job.State)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateCompleted)
	if j.StartedAt.Before(res.Job.RunAt) {
		t.Fatalf("started %s before run_at %s", j.StartedAt, res.Job.RunAt)
	}
}

func TestInsertTxRolledBackLeavesNoJob(t *testing.T) {
	t.Parallel()
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error { return nil }, nil)
	pool := b.drv.(interface{ Pool() *pgxpool.Pool }).Pool()
	tx, err := pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.client.InsertTx(b.ctx, tx, sleepArgs{N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.InsertManyTx(b.ctx, tx, []skiplock.InsertManyParams{{Args: sleepArgs{N: 2}}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(b.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.JobGet(b.ctx, res.Job.ID); !errors.Is(err, skiplock.ErrNotFound) {
		t.Fatalf("job after rollback: %v", err)
	}
	jobs, err := b.client.JobList(b.ctx, skiplock.JobListParams{})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("jobs after rollback: %d, %v", len(jobs), err)
	}
	// Committed, the job is there.
	tx, _ = pool.Begin(b.ctx)
	res, err = b.client.InsertTx(b.ctx, tx, sleepArgs{N: 3}, nil)
	if err != nil || tx.Commit(b.ctx) != nil {
		t.Fatal(err)
	}
	if _, err := b.client.JobGet(b.ctx, res.Job.ID); err != nil {
		t.Fatal(err)
	}
}

func TestIdempotencyKeyUnderConcurrency(t *testing.T) {
	t.Parallel()
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error { return nil }, nil)
	var wg sync.WaitGroup
	ids := make([]int64, 16)
	dups := atomic.Int64{}
	for i := range ids {
		wg.Go(func() {
			res, err := b.client.Insert(b.ctx, sleepArgs{N: i}, &skiplock.InsertOpts{IdempotencyKey: "the-key"})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = res.Job.ID
			if res.Duplicate {
				dups.Add(1)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("ids %v: want one job", ids)
		}
	}
	if dups.Load() != 15 {
		t.Fatalf("%d duplicates, want 15", dups.Load())
	}
	// Another tenant has its own key space.
	res, err := b.client.Insert(b.ctx, sleepArgs{}, &skiplock.InsertOpts{IdempotencyKey: "the-key", Tenant: "t2"})
	if err != nil || res.Duplicate {
		t.Fatalf("other tenant: %+v %v", res, err)
	}
}

func TestValidationErrorsNameTheField(t *testing.T) {
	t.Parallel()
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error { return nil }, nil)
	cases := map[string]*skiplock.InsertOpts{
		"priority":      {Priority: skiplock.Int(11)},
		"max_retries":   {MaxRetries: skiplock.Int(-1)},
		"metadata":      {Metadata: []byte("{bad")},
		"depends_on[0]": {DependsOn: []int64{0}},
	}
	for field, opts := range cases {
		_, err := b.client.Insert(b.ctx, sleepArgs{}, opts)
		var ve *skiplock.ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
	if _, err := b.client.Insert(b.ctx, sleepArgs{}, &skiplock.InsertOpts{DependsOn: []int64{424242}}); !errors.Is(err, skiplock.ErrMissingDependency) {
		t.Errorf("missing dependency: %v", err)
	}
	if jobs, _ := b.client.JobList(b.ctx, skiplock.JobListParams{}); len(jobs) != 0 {
		t.Fatalf("rejected inserts stored %d jobs", len(jobs))
	}
}

// Job goroutines are reused from job to job; a queue still never runs more
// than MaxWorkers jobs at once, and every job runs exactly once, whether the
// jobs are short (claimed in full batches) or long (claimed as slots free).
func TestMaxWorkersBoundsConcurrency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		jobs  int
		sleep time.Duration
	}{{"short", 400, 0}, {"long", 40, 15 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var running, peak atomic.Int64
			var mu sync.Mutex
			runs := map[int]int{}
			b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
				n := running.Add(1)
				defer running.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(tc.sleep)
				mu.Lock()
				runs[j.Args.N]++
				mu.Unlock()
				return nil
			}, func(c *skiplock.Config) { c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: 4}} })
			jobs := make([]skiplock.InsertManyParams, tc.jobs)
			for i := range jobs {
				jobs[i] = skiplock.InsertManyParams{Args: sleepArgs{N: i}}
			}
			if _, err := b.client.InsertMany(b.ctx, jobs); err != nil {
				t.Fatal(err)
			}
			b.start(t)
			waitRuns(t, &mu, runs, tc.jobs)
			if err := b.client.Stop(b.ctx); err != nil {
				t.Fatal(err)
			}
			if p := peak.Load(); p > 4 || p < 1 {
				t.Fatalf("peak concurrency %d, MaxWorkers 4", p)
			}
			for n, c := range runs {
				if c != 1 {
					t.Fatalf("job %d ran %d times", n, c)
				}
			}
		})
	}
}

// Claims start where the last one ended and go back to the head of the
// queue now and then: a job that lands before that place (here a higher
// priority, and a run_at in the past) still runs, and before the backlog
// that was being worked when it arrived.
func TestJobsBehindTheClaimPlaceRun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	runs := map[int]int{}
	var order []int
	var urgentRan atomic.Int32
	// The backlog's jobs after the tenth wait until the urgent jobs are in,
	// so that they are inserted while most of the backlog is still to run,
	// however slow the machine.
	gate := make(chan struct{})
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		if j.Args.N >= urgentN {
			urgentRan.Add(1)
		} else if j.Args.N >= 10 {
			<-gate
		}
		// Until both urgent jobs have run, each backlog job takes 20 ms, two
		// at a time: 15 s of backlog, so that a claim from the head comes
		// while it lasts however slow the machine (one comes 5 s after the
		// last at most). After that the rest of the backlog runs at once.
		if urgentRan.Load() < 2 {
			time.Sleep(20 * time.Millisecond)
		}
		mu.Lock()
		runs[j.Args.N]++
		order = append(order, j.Args.N)
		mu.Unlock()
		return nil
	}, func(c *skiplock.Config) { c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: 2}} })
	const backlog = 1500
	jobs := make([]skiplock.InsertManyParams, backlog)
	for i := range jobs {
		jobs[i] = skiplock.InsertManyParams{Args: sleepArgs{N: i}, Opts: &skiplock.InsertOpts{Priority: skiplock.Int(1)}}
	}
	if _, err := b.client.InsertMany(b.ctx, jobs); err != nil {
		t.Fatal(err)
	}
	b.start(t)
	for { // wait until claims are under way
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n >= 10 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	urgent := []skiplock.InsertManyParams{
		{Args: sleepArgs{N: urgentN}, Opts: &skiplock.InsertOpts{Priority: skiplock.Int(9)}},
		{Args: sleepArgs{N: urgentN + 1}, Opts: &skiplock.InsertOpts{Priority: skiplock.Int(1), RunAt: time.Now().Add(-time.Hour)}},
	}
	if _, err := b.client.InsertMany(b.ctx, urgent); err != nil {
		t.Fatal(err)
	}
	close(gate)
	waitRuns(t, &mu, runs, backlog+len(urgent))
	mu.Lock()
	defer mu.Unlock()
	for n, c := range runs {
		if c != 1 {
			t.Fatalf("job %d ran %d times", n, c)
		}
	}
	for _, n := range order[len(order)-10:] {
		if n >= urgentN {
			t.Fatalf("job %d, inserted before the backlog's last jobs were claimed, ran among the last: %v", n, order[len(order)-10:])
		}
	}
}

// urgentN numbers TestJobsBehindTheClaimPlaceRun's urgent jobs, after its
// backlog's.
const urgentN = 1_000_000

// waitRuns waits until runs (guarded by mu) counts n distinct jobs.
func waitRuns(t *testing.T, mu *sync.Mutex, runs map[int]int, n int) {
	t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for {
		mu.Lock()
		done := len(runs)
		mu.Unlock()
		if done == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs ran", done, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Claims through Client.Claim (the HTTP workers' path) also start where the
// last one ended; a job that lands before that place is still claimed.
func TestExternalClaimsReachJobsBehindTheirPlace(t *testing.T) {
	t.Parallel()
	b := setup(t, func(context.Context, *skiplock.Job[sleepArgs]) error { return nil }, nil)
	claim := func() []*skiplock.JobRow {
		t.Helper()
		jobs, err := b.client.Claim(b.ctx, skiplock.ClaimParams{Queue: "other", WorkerID: "w", Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	insert := func(n, prio int) int64 {
		t.Helper()
		res, err := b.client.Insert(b.ctx, sleepArgs{N: n}, &skiplock.InsertOpts{Queue: "other", Priority: skiplock.Int(prio)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Job.ID
	}
	insert(1, 1)
	if got := claim(); len(got) != 1 {
		t.Fatalf("claimed %d jobs, want 1", len(got))
	}
	urgent := insert(2, 9) // before the place: a higher priority
	seen := map[int64]int{}
	deadline := time.Now().Add(10 * time.Second)
	for seen[urgent] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("job %d before the claim place never claimed", urgent)
		}
		for _, j := range claim() {
			seen[j.ID]++
		}
		time.Sleep(5 * time.Millisecond)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("job %d claimed %d times", id, n)
		}
	}
}

// waitStartsAtInsert inserts no-op jobs until one starts at its insert (the
// client's first claim found the queue empty and its slot is free).
func waitStartsAtInsert(t *testing.T, b *testBundle) *skiplock.InsertResult {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := b.client.Insert(b.ctx, sleepArgs{N: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Job.State == skiplock.StateRunning {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatal("no insert started its job on an idle client")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A job inserted through a client that works its queue, with a free slot
// and nothing pending, starts there at once: no wake-up, no claim.
func TestInsertStartsTheJobOnAnIdleClient(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	runs := map[int]int{}
	release := make(chan struct{})
	b := setup(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		if j.Args.N == 1 {
			<-release
		}
		mu.Lock()
		runs[j.Args.N]++
		mu.Unlock()
		return nil
	}, func(c *skiplock.Config) { c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: 1}} })
	b.start(t)
	first := waitStartsAtInsert(t, b)
	if j := first.Job; j.WorkerID != b.client.ID() || j.Attempt != 1 || j.LeaseUntil == nil {
		t.Fatalf("started at insert: worker %q (client %q) attempt %d lease %v", j.WorkerID, b.client.ID(), j.Attempt, j.LeaseUntil)
	}
	waitState(t, b, first.Job.ID, skiplock.StateCompleted)

	// The only slot taken by a job that waits, so the next insert is
	// claimed like any other job once the slot frees.
	held, err := b.client.Insert(b.ctx, sleepArgs{N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, b, held.Job.ID, skiplock.StateRunning)
	second, err := b.client.Insert(b.ctx, sleepArgs{N: 2}, nil)
	if err != nil || second.Job.State != skiplock.StatePending {
		t.Fatalf("insert with no free slot: %+v, %v", second.Job, err)
	}
	close(release)
	for _, id := range []int64{held.Job.ID, second.Job.ID} {
		waitState(t, b, id, skiplock.StateCompleted)
	}

	// A paused queue starts nothing, at insert or later, until resumed.
	if err := b.client.QueuePause(b.ctx, "default"); err != nil {
		t.Fatal(err)
	}
	paused, err := b.client.Insert(b.ctx, sleepArgs{N: 4}, nil)
	if err != nil || paused.Job.State != skiplock.StatePending || paused.Job.WorkerID != "" {
		t.Fatalf("insert into a paused queue: %+v, %v", paused.Job, err)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	ran := runs[4]
	mu.Unlock()
	if ran != 0 {
		t.Fatal("a job of a paused queue ran")
	}
	if err := b.client.QueueResume(b.ctx, "default"); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, paused.Job.ID, skiplock.StateCompleted)

	// Jobs due later, or with an idempotency key, take the usual path.
	later, err := b.client.Insert(b.ctx, sleepArgs{N: 5}, &skiplock.InsertOpts{Delay: time.Hour})
	if err != nil || later.Job.State != skiplock.StateScheduled {
		t.Fatalf("insert due later: %+v, %v", later.Job, err)
	}
	keyed, err := b.client.Insert(b.ctx, sleepArgs{N: 6}, &skiplock.InsertOpts{IdempotencyKey: "k6"})
	if err != nil || keyed.Job.State != skiplock.StatePending {
		t.Fatalf("insert with a key: %+v, %v", keyed.Job, err)
	}
	waitState(t, b, keyed.Job.ID, skiplock.StateCompleted)
	mu.Lock()
	defer mu.Unlock()
	for _, n := range []int{1, 2, 4, 6} {
		if runs[n] != 1 {
			t.Fatalf("job %d ran %d times", n, runs[n])
		}
	}
}

// A job inserted while every slot is busy is claimed as soon as a slot
// frees, not at the next poll (here a minute away): the wake-up that found
// no free slot is owed a claim.
func TestJobInsertedWhileSlotsAreBusyRunsWhenOneFrees(t *testing.T) {
	t.Parallel()
	b, release := idleClientWithHeldJob(t, 1, nil)
	// The queue is idle and its slot free: the busy job starts at its
	// insert, and no claim marks the queue as having a backlog.
	time.Sleep(50 * time.Millisecond) // the no-op job's slot frees
	busy, err := b.client.Insert(b.ctx, sleepArgs{N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if busy.Job.State != skiplock.StateRunning {
		// On a loaded machine the no-op job's slot may not be free yet:
		// the busy job then starts through its wake-up.
		waitState(t, b, busy.Job.ID, skiplock.StateRunning)
	}
	next, err := b.client.Insert(b.ctx, sleepArgs{N: 2}, nil)
	if err != nil || next.Job.State != skiplock.StatePending {
		t.Fatalf("insert with the only slot busy: %+v, %v", next.Job, err)
	}
	time.Sleep(50 * time.Millisecond) // the wake-up finds no free slot
	release()
	waitState(t, b, next.Job.ID, skiplock.StateCompleted) // 20 s; the next poll is a minute away
}

// idleClient starts a client working with work whose poll is a minute
// away, and answers once its queue is idle (a no-op job started at its
// insert and completed): from then on only wake-ups start jobs in time.
func idleClient(t *testing.T, work func(context.Context, *skiplock.Job[sleepArgs]) error, configure func(*skiplock.Config)) *testBundle {
	t.Helper()
	b := setup(t, work, func(c *skiplock.Config) {
		if configure != nil {
			configure(c)
		}
		c.FetchPollInterval = time.Minute
	})
	b.start(t)
	waitState(t, b, waitStartsAtInsert(t, b).Job.ID, skiplock.StateCompleted)
	return b
}

// idleClientWithHeldJob is an idleClient with maxWorkers slots whose job 1
// waits for release, then returns held. A test that fails before its
// release lets the job go at its end, so that the client can stop.
func idleClientWithHeldJob(t *testing.T, maxWorkers int, held error) (*testBundle, func()) {
	t.Helper()
	ch := make(chan struct{})
	release := sync.OnceFunc(func() { close(ch) })
	// Registered after the client's (even when idleClient fails): cleanups
	// run last first, so the job is let go before the client stops.
	defer t.Cleanup(release)
	b := idleClient(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		if j.Args.N == 1 {
			<-ch
			return held
		}
		return nil
	}, func(c *skiplock.Config) {
		c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: maxWorkers}}
	})
	return b, release
}

// A job snoozed for no time on an idle queue runs again at once, not at
// the next poll (here a minute away).
func TestJobSnoozedForNoTimeRunsAgainAtOnce(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	b := idleClient(t, func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
		if j.Args.N == 1 && runs.Add(1) == 1 {
			return skiplock.Snooze(0)
		}
		return nil
	}, nil)
	res, err := b.client.Insert(b.ctx, sleepArgs{N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, b, res.Job.ID, skiplock.StateCompleted)
	if n := runs.Load(); n != 2 {
		t.Fatalf("job ran %d times, want 2 (snoozed, then done)", n)
	}
}

// dependentOfHeldJob inserts job 1, held until release, and a child of it
// with opts, and answers both once the insert's wake-ups have come and
// gone: the child can then start only when the parent's end wakes it.
func dependentOfHeldJob(t *testing.T, b *testBundle, opts skiplock.InsertOpts) (parent, child *skiplock.InsertResult) {
	t.Helper()
	parent, err := b.client.Insert(b.ctx, sleepArgs{N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, b, parent.Job.ID, skiplock.StateRunning)
	opts.DependsOn = []int64{parent.Job.ID}
	child, err = b.client.Insert(b.ctx, sleepArgs{N: 2}, &opts)
	if err != nil || child.Job.State != skiplock.StateWaiting {
		t.Fatalf("child of a running parent: %+v, %v", child.Job, err)
	}
	time.Sleep(100 * time.Millisecond)
	return parent, child
}

// A job waiting on a parent starts as soon as the parent completes, not at
// the next poll (here a minute away).
func TestDependentStartsWhenItsParentCompletes(t *testing.T) {
	t.Parallel()
	b, release := idleClientWithHeldJob(t, 10, nil)
	_, child := dependentOfHeldJob(t, b, skiplock.InsertOpts{})
	release()
	waitState(t, b, child.Job.ID, skiplock.StateCompleted)
}

// A dependent that runs on its parent's failure starts as soon as the
// parent fails for good, not at the next poll (here a minute away).
func TestDependentStartsWhenItsParentFails(t *testing.T) {
	t.Parallel()
	b, release := idleClientWithHeldJob(t, 10, skiplock.Permanent(errors.New("parent gives up")))
	parent, child := dependentOfHeldJob(t, b, skiplock.InsertOpts{RunOnParentFailure: true})
	release()
	waitState(t, b, parent.Job.ID, skiplock.StateFailed)
	waitState(t, b, child.Job.ID, skiplock.StateCompleted)
}

// Client.HandBack returns jobs claimed for an external worker that never
// got them: pending again with the attempt unspent, cancelled if it was
// asked to cancel; a job no longer held is refused, the others still go.
func TestExternalHandBack(t *testing.T) {
	t.Parallel()
	b := setup(t, func(context.Context, *skiplock.Job[sleepArgs]) error { return nil }, nil)
	for range 2 {
		if _, err := b.client.Insert(b.ctx, sleepArgs{N: 1}, &skiplock.InsertOpts{Queue: "other"}); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := b.client.Claim(b.ctx, skiplock.ClaimParams{Queue: "other", WorkerID: "w", Max: 10})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("claim: %d jobs, %v", len(jobs), err)
	}
	if _, err := b.client.JobCancel(b.ctx, jobs[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := b.client.HandBack(b.ctx, jobs); err != nil {
		t.Fatal(err)
	}
	back, err := b.client.JobGet(b.ctx, jobs[0].ID)
	if err != nil || back.State != skiplock.StatePending || back.Attempt != 0 || back.WorkerID != "" {
		t.Fatalf("handed back: %+v, %v", back, err)
	}
	if j, err := b.client.JobGet(b.ctx, jobs[1].ID); err != nil || j.State != skiplock.StateCancelled {
		t.Fatalf("handed back after a cancel request: %+v, %v", j, err)
	}
	if err := b.client.HandBack(b.ctx, jobs[:1]); !errors.Is(err, skiplock.ErrLeaseLost) {
		t.Fatalf("hand back of a job no longer held: %v", err)
	}
}
