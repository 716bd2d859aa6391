package skiplock_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// wfDrivers are the databases the workflow tests run on; SQLite joins with
// one line when its test helper lands.
var wfDrivers = []struct {
	name string
	open func(t *testing.T) driver.FullDriver
}{
	{"postgres", func(t *testing.T) driver.FullDriver { d, _ := pgtest.Schema(t); return d }},
	{"sqlite", func(t *testing.T) driver.FullDriver { return sqlitetest.New(t) }},
}

// forEachDriver runs fn on every driver, in parallel.
func forEachDriver(t *testing.T, fn func(t *testing.T, b *wfBundle)) {
	t.Parallel()
	for _, d := range wfDrivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			t.Cleanup(cancel)
			fn(t, &wfBundle{drv: d.open(t), ctx: ctx})
		})
	}
}

// wfBundle is what a workflow test needs: a database and a context.
type wfBundle struct {
	drv driver.FullDriver
	ctx context.Context
}

// client answers a client with quick test intervals; mod adjusts it and
// start starts it (stopped at cleanup).
func (b *wfBundle) client(t *testing.T, start bool, mod func(*skiplock.Config)) *skiplock.Client {
	t.Helper()
	cfg := &skiplock.Config{FetchPollInterval: 50 * time.Millisecond, RescueInterval: 100 * time.Millisecond,
		SchedulerInterval: 50 * time.Millisecond, LeaderTTL: time.Second,
		Backoff: func(int) time.Duration { return 10 * time.Millisecond }}
	if mod != nil {
		mod(cfg)
	}
	c, err := skiplock.NewClient(b.drv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if start {
		if err := c.Start(b.ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.StopAndCancel(context.Background()) })
	}
	return c
}

func (b *wfBundle) job(t *testing.T, id int64) *skiplock.JobRow {
	t.Helper()
	j, err := b.drv.JobGet(b.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// eventually polls cond until it holds or 20 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 20*time.Second, what, cond)
}

func (b *wfBundle) waitState(t *testing.T, id int64, st skiplock.JobState) *skiplock.JobRow {
	t.Helper()
	var j *skiplock.JobRow
	eventually(t, fmt.Sprintf("job %d %s", id, st), func() bool { j = b.job(t, id); return j.State == st })
	return j
}

func (b *wfBundle) insert(t *testing.T, c *skiplock.Client, args skiplock.JobArgs, opts *skiplock.InsertOpts) *skiplock.JobRow {
	t.Helper()
	res, err := c.Insert(b.ctx, args, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Job
}

func (b *wfBundle) jobsOfKind(t *testing.T, kind string) []*skiplock.JobRow {
	t.Helper()
	jobs, err := b.drv.JobList(b.ctx, driver.ListParams{Kind: kind, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

type stageArgs struct {
	Flow string `json:"flow"`
	Step int    `json:"step"`
}

func (stageArgs) Kind() string { return "wf_stage" }

type taskArgs struct {
	Name string `json:"name"`
}

func (taskArgs) Kind() string { return "wf_task" }

var stageNames = []string{"scrape", "enrich", "index", "publish"}

func TestWorkflowPipelineRunsInOrder(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		const flows = 8
		var seq atomic.Int64
		var mu sync.Mutex
		ran := map[string][]int64{} // flow → the sequence number of each step's start
		work := skiplock.WorkFunc[stageArgs](func(ctx context.Context, j *skiplock.Job[stageArgs]) error {
			mu.Lock()
			ran[j.Args.Flow] = append(ran[j.Args.Flow], seq.Add(1))
			if len(ran[j.Args.Flow]) != j.Args.Step {
				t.Errorf("flow %s: step %d ran after %d steps", j.Args.Flow, j.Args.Step, len(ran[j.Args.Flow])-1)
			}
			mu.Unlock()
			if j.Args.Step < len(stageNames) {
				j.Next(stageArgs{Flow: j.Args.Flow, Step: j.Args.Step + 1},
					&skiplock.InsertOpts{Stage: stageNames[j.Args.Step]})
			}
			return nil
		})
		var clients []*skiplock.Client
		for i := range 2 { // two servers working the same queue
			clients = append(clients, b.client(t, true, func(c *skiplock.Config) {
				c.ID = fmt.Sprintf("server-%d", i)
				c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: 4}}
				c.Workers = skiplock.NewWorkers()
				skiplock.MustAddWorker(c.Workers, work)
			}))
		}
		for i := range flows {
			flow := fmt.Sprintf("video-%d", i)
			b.insert(t, clients[i%2], stageArgs{Flow: flow, Step: 1},
				&skiplock.InsertOpts{WorkflowID: flow, Stage: stageNames[0], Tenant: "acme"})
		}
		for i := range flows {
			flow := fmt.Sprintf("video-%d", i)
			var v *skiplock.WorkflowView
			eventually(t, "workflow "+flow+" completed", func() bool {
				var err error
				v, err = clients[0].Workflow(b.ctx, flow)
				return err == nil && v.Status == skiplock.WorkflowCompleted
			})
			if len(v.Stages) != 4 || v.CurrentStage != "" || v.Counts[skiplock.StateCompleted] != 4 || v.FinishedAt == nil {
				t.Fatalf("workflow %s: %+v", flow, v)
			}
			for k, s := range v.Stages {
				j := s.Jobs[0]
				if s.Name != stageNames[k] || s.State != skiplock.StateCompleted || len(s.Jobs) != 1 ||
					j.Tenant != "acme" || j.Attempt != 1 || s.Progress != 100 {
					t.Fatalf("workflow %s stage %d: %+v", flow, k, s)
				}
			}
			mu.Lock()
			steps := ran[flow]
			mu.Unlock()
			for k := 1; k < len(steps); k++ {
				if steps[k] <= steps[k-1] {
					t.Fatalf("flow %s: steps ran out of order %v", flow, steps)
				}
			}
		}
	})
}

// lostBeats is a driver whose heartbeats never reach the database, as
// behind a network partition.
type lostBeats struct{ driver.FullDriver }

func (lostBeats) JobHeartbeat(context.Context, driver.HeartbeatParams) ([]driver.HeartbeatResult, error) {
	return nil, errors.New("heartbeat lost on the way")
}

// UnwrapExecutor lets driver.As find the stores beyond Full.
func (d lostBeats) UnwrapExecutor() driver.Executor { return d.FullDriver }

func TestWorkflowNextIsAtomicWithCompletion(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		// A completion whose lease was lost inserts no next job.
		started, release := make(chan struct{}), make(chan struct{})
		// Its heartbeats never reach the database: the lease runs out.
		c := (&wfBundle{drv: lostBeats{b.drv}, ctx: b.ctx}).client(t, true, func(c *skiplock.Config) {
			c.Queues = map[string]skiplock.QueueConfig{"atomic": {MaxWorkers: 1}}
			c.FetchPollInterval, c.RescueInterval = time.Hour, time.Hour
			c.Workers = skiplock.NewWorkers()
			skiplock.MustAddWorker(c.Workers, skiplock.WorkFunc[taskArgs](func(ctx context.Context, j *skiplock.Job[taskArgs]) error {
				close(started)
				<-release
				j.Next(stageArgs{Flow: "from-lost-lease"}, nil)
				return nil
			}), skiplock.WorkerOpts{Lease: time.Second})
		})
		j := b.insert(t, c, taskArgs{Name: "slow"}, &skiplock.InsertOpts{Queue: "atomic"})
		<-started
		time.Sleep(1200 * time.Millisecond) // the lease runs out
		if _, err := b.drv.JobRescue(b.ctx, 10, time.Time{}); err != nil {
			t.Fatal(err)
		}
		claimed, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "atomic", WorkerID: "thief", Max: 1})
		if err != nil || len(claimed) != 1 || claimed[0].Attempt != 2 {
			t.Fatalf("claim after rescue: %v, %v", claimed, err)
		}
		close(release)
		if err := c.Stop(b.ctx); err != nil { // drains the worker's completion
			t.Fatal(err)
		}
		if n := len(b.jobsOfKind(t, "wf_stage")); n != 0 {
			t.Fatalf("%d next jobs after a completion that lost its lease, want 0", n)
		}
		if got := b.job(t, j.ID); got.State != skiplock.StateRunning || got.WorkerID != "thief" {
			t.Fatalf("job %+v, want running under thief", got)
		}
		_, next, err := c.Complete(b.ctx, j.ID, skiplock.CompleteParams{WorkerID: "thief",
			Next: []skiplock.InsertManyParams{{Args: stageArgs{Flow: "thief"}}}})
		if err != nil || len(next) != 1 || len(b.jobsOfKind(t, "wf_stage")) != 1 {
			t.Fatalf("complete by the holder: next %v, err %v", next, err)
		}
	})
}

func TestWorkflowNextFailureRetriesTheJob(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, true, func(c *skiplock.Config) {
			c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: 1}}
			c.Workers = skiplock.NewWorkers()
			skiplock.MustAddWorker(c.Workers, skiplock.WorkFunc[taskArgs](func(ctx context.Context, j *skiplock.Job[taskArgs]) error {
				switch j.Attempt {
				case 1: // fails validation
					j.Next(stageArgs{}, &skiplock.InsertOpts{Priority: skiplock.Int(99)})
				case 2: // fails in the database, after the completion statement
					j.Next(stageArgs{}, &skiplock.InsertOpts{DependsOn: []int64{j.ID + 1_000_000}})
				}
				return nil
			}))
		})
		j := b.insert(t, c, taskArgs{}, nil)
		got := b.waitState(t, j.ID, skiplock.StateCompleted)
		if got.Attempt != 3 || len(got.Errors) != 2 ||
			!strings.Contains(got.Errors[0].Message, "priority") ||
			!strings.Contains(got.Errors[1].Message, skiplock.ErrMissingDependency.Error()) {
			t.Fatalf("job %+v", got)
		}
		if n := len(b.jobsOfKind(t, "wf_stage")); n != 0 {
			t.Fatalf("%d next jobs, want 0", n)
		}
	})
}

func TestWorkflowFanOutFanIn(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		opts := func(stage string, deps ...int64) *skiplock.InsertOpts {
			return &skiplock.InsertOpts{WorkflowID: "fan", Stage: stage, DependsOn: deps}
		}
		root := b.insert(t, c, taskArgs{Name: "root"}, opts("root"))
		var fan []int64
		for i := range 3 {
			j := b.insert(t, c, taskArgs{Name: fmt.Sprint("part-", i)}, opts("parts", root.ID))
			if j.State != skiplock.StateWaiting {
				t.Fatalf("child of a live parent is %s, want waiting", j.State)
			}
			fan = append(fan, j.ID)
		}
		join := b.insert(t, c, taskArgs{Name: "join"}, opts("join", fan...))
		if _, err := c.Insert(b.ctx, taskArgs{}, opts("x", root.ID+1_000_000)); !errors.Is(err, skiplock.ErrMissingDependency) {
			t.Fatalf("missing dependency: %v, want ErrMissingDependency", err)
		}
		claimAndComplete := func(want int) []int64 {
			t.Helper()
			jobs, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 10})
			if err != nil || len(jobs) != want {
				t.Fatalf("claimed %d jobs (%v), want %d", len(jobs), err, want)
			}
			var ids []int64
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			return ids
		}
		complete := func(id int64) {
			t.Helper()
			if _, _, err := c.Complete(b.ctx, id, skiplock.CompleteParams{WorkerID: "w"}); err != nil {
				t.Fatal(err)
			}
		}
		complete(claimAndComplete(1)[0])
		parts := claimAndComplete(3) // fan-out: all three run at once
		v, err := c.Workflow(b.ctx, "fan")
		if err != nil || v.Status != skiplock.WorkflowRunning || v.CurrentStage != "parts" ||
			v.Stages[1].State != skiplock.StateRunning || v.Stages[2].State != skiplock.StateWaiting {
			t.Fatalf("view %+v, %v", v, err)
		}
		for i, id := range parts {
			if st := b.job(t, join.ID).State; st != skiplock.StateWaiting {
				t.Fatalf("join is %s after %d of 3 parents, want waiting", st, i)
			}
			complete(id)
		}
		if st := b.job(t, join.ID).State; st != skiplock.StatePending {
			t.Fatalf("join is %s after all parents completed, want pending", st)
		}
		complete(claimAndComplete(1)[0])
		if v, err = c.Workflow(b.ctx, "fan"); err != nil || v.Status != skiplock.WorkflowCompleted {
			t.Fatalf("view %+v, %v", v, err)
		}
		if _, err := c.Workflow(b.ctx, "nope"); !errors.Is(err, skiplock.ErrNotFound) {
			t.Fatalf("unknown workflow: %v, want ErrNotFound", err)
		}
	})
}

func TestWorkflowFailedParentCancelsTree(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		opts := func(runAnyway bool, deps ...int64) *skiplock.InsertOpts {
			return &skiplock.InsertOpts{WorkflowID: "tree", DependsOn: deps, RunOnParentFailure: runAnyway}
		}
		a := b.insert(t, c, taskArgs{Name: "a"}, opts(false))
		bj := b.insert(t, c, taskArgs{Name: "b"}, opts(false, a.ID))
		cj := b.insert(t, c, taskArgs{Name: "c"}, opts(false, bj.ID))
		d := b.insert(t, c, taskArgs{Name: "d"}, opts(true, a.ID))
		if _, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Fail(b.ctx, a.ID, skiplock.FailParams{WorkerID: "w", Message: "disk full"}); err != nil {
			t.Fatal(err)
		}
		for id, parent := range map[int64]string{bj.ID: fmt.Sprintf("parent job %d failed", a.ID),
			cj.ID: fmt.Sprintf("parent job %d cancelled", bj.ID)} {
			j := b.job(t, id)
			if j.State != skiplock.StateCancelled || len(j.Errors) != 1 || j.Errors[0].Message != parent {
				t.Fatalf("job %d: %s %+v, want cancelled with %q", id, j.State, j.Errors, parent)
			}
		}
		if st := b.job(t, d.ID).State; st != skiplock.StatePending {
			t.Fatalf("RunOnParentFailure job is %s, want pending", st)
		}
		if _, err := c.JobCancel(b.ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		if v, err := c.Workflow(b.ctx, "tree"); err != nil || v.Status != skiplock.WorkflowFailed {
			t.Fatalf("view %+v, %v", v, err)
		}
	})
}

func TestWorkflowCancelNotRunningIsImmediate(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		parent := b.insert(t, c, taskArgs{}, nil)
		for _, opts := range []*skiplock.InsertOpts{nil, {Delay: time.Hour}, {DependsOn: []int64{parent.ID}}} {
			j := b.insert(t, c, taskArgs{}, opts)
			got, err := c.JobCancel(b.ctx, j.ID)
			if err != nil || got.State != skiplock.StateCancelled || got.FinishedAt == nil {
				t.Fatalf("cancel %s job: %+v, %v", j.State, got, err)
			}
		}
	})
}

type holdArgs struct{}

func (holdArgs) Kind() string { return "wf_hold" }

type probeArgs struct{}

func (probeArgs) Kind() string { return "wf_probe" }

func TestWorkflowCancelReachesRunningWorkerPromptly(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		started := make(chan struct{})
		causes := make(chan error, 1)
		probed := make(chan struct{}, 1)
		worker := b.client(t, true, func(c *skiplock.Config) {
			c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: 2}}
			// No heartbeat and no poll within the test: only the notification
			// can reach the worker.
			c.HeartbeatInterval, c.FetchPollInterval, c.Lease = time.Hour, time.Hour, 2*time.Hour
			c.Workers = skiplock.NewWorkers()
			skiplock.MustAddWorker(c.Workers, skiplock.WorkFunc[probeArgs](func(context.Context, *skiplock.Job[probeArgs]) error {
				probed <- struct{}{}
				return nil
			}))
			skiplock.MustAddWorker(c.Workers, skiplock.WorkFunc[holdArgs](func(ctx context.Context, j *skiplock.Job[holdArgs]) error {
				close(started)
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return ctx.Err()
			}))
		})
		_ = worker
		admin := b.client(t, false, nil) // another process: it reaches the worker through the database
		// A probe job from the admin runs only once the worker listens.
		b.insert(t, admin, probeArgs{}, nil)
		select {
		case <-probed:
		case <-time.After(20 * time.Second):
			t.Fatal("worker never heard of the probe job")
		}
		j := b.insert(t, admin, holdArgs{}, nil)
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatal("worker never started the job to cancel")
		}
		if got, err := admin.JobCancel(b.ctx, j.ID); err != nil || got.State != skiplock.StateRunning || !got.CancelRequested {
			t.Fatalf("cancel: %+v, %v", got, err)
		}
		select {
		case cause := <-causes:
			if !errors.Is(cause, skiplock.ErrCancelled) {
				t.Fatalf("worker's context cause %v, want ErrCancelled", cause)
			}
		case <-time.After(20 * time.Second):
			// Heartbeats and polls are an hour apart: only the notification
			// can have reached the worker within the test.
			t.Fatal("cancel did not reach the running worker")
		}
		b.waitState(t, j.ID, skiplock.StateCancelled)
	})
}

func TestWorkflowPausedQueueIsNeverClaimed(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		var worked atomic.Int64
		release := make(chan struct{})
		c := b.client(t, false, func(c *skiplock.Config) {
			c.Queues = map[string]skiplock.QueueConfig{"paused": {MaxWorkers: 5}, "busy": {MaxWorkers: 5}}
			c.FetchPollInterval = 20 * time.Millisecond
			c.Workers = skiplock.NewWorkers()
			skiplock.MustAddWorker(c.Workers, skiplock.WorkFunc[taskArgs](func(ctx context.Context, j *skiplock.Job[taskArgs]) error {
				worked.Add(1)
				return nil
			}))
			skiplock.MustAddWorker(c.Workers, skiplock.WorkFunc[holdArgs](func(ctx context.Context, j *skiplock.Job[holdArgs]) error {
				<-release
				return nil
			}))
		})
		if err := c.QueuePause(b.ctx, "paused", skiplock.QueueActionOpts{Create: true}); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for range 5 {
			ids = append(ids, b.insert(t, c, taskArgs{}, &skiplock.InsertOpts{Queue: "paused"}).ID)
		}
		if err := c.Start(b.ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.StopAndCancel(context.Background()) })
		// A running job finishes when its queue is paused under it.
		hold := b.insert(t, c, holdArgs{}, &skiplock.InsertOpts{Queue: "busy"})
		b.waitState(t, hold.ID, skiplock.StateRunning)
		if err := c.QueuePause(b.ctx, "busy"); err != nil {
			t.Fatal(err)
		}
		close(release)
		b.waitState(t, hold.ID, skiplock.StateCompleted)
		late := b.insert(t, c, taskArgs{}, &skiplock.InsertOpts{Queue: "busy"})
		time.Sleep(500 * time.Millisecond) // many polls and wake-ups
		if jobs, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "paused", WorkerID: "ext", Max: 10}); err != nil || len(jobs) != 0 {
			t.Fatalf("external claim from a paused queue: %d jobs, %v", len(jobs), err)
		}
		for _, id := range append(ids, late.ID) {
			if st := b.job(t, id).State; st != skiplock.StatePending {
				t.Fatalf("job %d in a paused queue is %s, want pending", id, st)
			}
		}
		if worked.Load() != 0 {
			t.Fatalf("%d jobs of paused queues worked, want 0", worked.Load())
		}
		// A paused job waits for its resume; resumed queues drain.
		single := b.insert(t, c, taskArgs{}, &skiplock.InsertOpts{Delay: time.Hour})
		if got, err := c.JobPause(b.ctx, single.ID); err != nil || got.State != skiplock.StatePaused {
			t.Fatalf("pause job: %+v, %v", got, err)
		}
		for _, q := range []string{"paused", "busy"} {
			if err := c.QueueResume(b.ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		b.waitState(t, late.ID, skiplock.StateCompleted)
		for _, id := range ids {
			b.waitState(t, id, skiplock.StateCompleted)
		}
		if got, err := c.JobResume(b.ctx, single.ID); err != nil || got.State != skiplock.StateScheduled {
			t.Fatalf("resume job: %+v, %v", got, err)
		}
	})
}

func TestWorkflowProgressAndCheckpointSurviveCrash(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		admin := b.client(t, false, nil)
		j := b.insert(t, admin, taskArgs{Name: "crawl"}, nil)
		// A worker process claims the job, saves its place, then dies.
		if _, err := admin.Claim(b.ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "doomed", Max: 1,
			Lease: time.Second}); err != nil {
			t.Fatal(err)
		}
		pct, msg := 40, "page 3 of 8"
		if _, err := admin.Heartbeat(b.ctx, j.ID, skiplock.HeartbeatParams{WorkerID: "doomed", Lease: time.Second,
			Progress: &pct, ProgressMessage: &msg, Checkpoint: json.RawMessage(`{"page": 3}`)}); err != nil {
			t.Fatal(err)
		}
		if got := b.job(t, j.ID); got.State != skiplock.StateRunning || got.Progress != 40 ||
			got.ProgressMessage != msg || !sameJSON(got.Checkpoint, `{"page": 3}`) {
			t.Fatalf("running job %+v", got)
		}
		// The next attempt, in another process, resumes from the checkpoint
		// once the rescuer gives the job back.
		type page struct{ Page int }
		resumed := make(chan page, 2)
		saved, release := make(chan struct{}), make(chan struct{})
		b.client(t, true, func(c *skiplock.Config) {
			c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: 1}}
			c.Workers = skiplock.NewWorkers()
			skiplock.MustAddWorker(c.Workers, skiplock.WorkFunc[taskArgs](func(ctx context.Context, j *skiplock.Job[taskArgs]) error {
				var p page
				if ok, err := j.LoadCheckpoint(&p); !ok || err != nil {
					return fmt.Errorf("no checkpoint: %v", err)
				}
				resumed <- p
				if err := j.Progress(ctx, 75, "page 6 of 8"); err != nil {
					return err
				}
				if err := j.SaveCheckpoint(ctx, page{Page: 6}); err != nil {
					return err
				}
				close(saved)
				select {
				case <-release:
				case <-ctx.Done(): // the test failed and is stopping
				}
				return nil
			}))
		})
		if p := <-resumed; p.Page != 3 {
			t.Fatalf("resumed at page %d, want 3", p.Page)
		}
		<-saved
		if got := b.job(t, j.ID); got.Progress != 75 || got.ProgressMessage != "page 6 of 8" ||
			!sameJSON(got.Checkpoint, `{"Page": 6}`) {
			t.Fatalf("running job %+v", got)
		}
		close(release)
		got := b.waitState(t, j.ID, skiplock.StateCompleted)
		if got.Attempt != 2 || len(got.Errors) != 1 || got.Errors[0].Type != "lease_expired" {
			t.Fatalf("job %+v", got)
		}
	})
}

func TestWorkflowPeriodicOncePerTickAcrossServers(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		var clients []*skiplock.Client
		for i := range 3 { // three servers on one database
			clients = append(clients, b.client(t, true, func(c *skiplock.Config) {
				c.ID = fmt.Sprintf("server-%d", i)
				c.SchedulerInterval = 100 * time.Millisecond
				c.PeriodicJobs = []skiplock.PeriodicJob{{Name: "pulse", Schedule: "@every 1s", Kind: "wf_pulse",
					Payload: json.RawMessage(`{"from": "cron"}`)}}
			}))
		}
		// Three ticks, each of which all three servers were due to enqueue.
		testwait.Until(t, 30*time.Second, "three ticks of pulse enqueued", func() bool {
			keys := map[string]bool{}
			for _, j := range b.jobsOfKind(t, "wf_pulse") {
				keys[j.IdempotencyKey] = true
			}
			return len(keys) >= 3
		})
		for _, c := range clients {
			if err := c.Stop(b.ctx); err != nil {
				t.Fatal(err)
			}
		}
		jobs := b.jobsOfKind(t, "wf_pulse")
		ticks := map[int64]int{}
		var first, last int64
		for _, j := range jobs {
			var tick int64
			if _, err := fmt.Sscanf(j.IdempotencyKey, "periodic:pulse:%d", &tick); err != nil {
				t.Fatalf("job %d key %q: %v", j.ID, j.IdempotencyKey, err)
			}
			ticks[tick]++
			if first == 0 || tick < first {
				first = tick
			}
			last = max(last, tick)
		}
		for tick := first; tick <= last; tick++ {
			if ticks[tick] != 1 {
				t.Fatalf("tick %d enqueued %d times, want once (all: %v)", tick, ticks[tick], ticks)
			}
		}
		if len(jobs) != len(ticks) {
			t.Fatalf("%d jobs for %d ticks", len(jobs), len(ticks))
		}
	})
}

func TestWorkflowPeriodicConfigIsValidated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		jobs []skiplock.PeriodicJob
		want string
	}{
		{[]skiplock.PeriodicJob{{Name: "a", Schedule: "@hourly", Kind: "k"}, {Name: "b", Schedule: "every hour", Kind: "k"}},
			"config: PeriodicJobs[1].Schedule: "},
		{[]skiplock.PeriodicJob{{Name: "a", Schedule: "@hourly", Kind: "k"}, {Name: "a", Schedule: "@daily", Kind: "k"}},
			"config: PeriodicJobs[1].Name: "},
		{[]skiplock.PeriodicJob{{Schedule: "@hourly", Kind: "k"}}, "config: PeriodicJobs[0].Name: "},
		{[]skiplock.PeriodicJob{{Name: "a", Schedule: "@hourly"}}, "config: PeriodicJobs[0].Kind: "},
		{[]skiplock.PeriodicJob{{Name: "a", Schedule: "@every 1m", Args: taskArgs{},
			Opts: &skiplock.InsertOpts{Priority: skiplock.Int(11)}}}, "config: PeriodicJobs[0].Opts.Priority: "},
	} {
		_, err := skiplock.NewClient(&nilDriver{}, &skiplock.Config{PeriodicJobs: tc.jobs})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("error %v, want prefix %q", err, tc.want)
		}
	}
	if _, err := skiplock.ParsePeriodic("nightly", "0 2 * * *", "janitor", json.RawMessage(`[1]`)); err == nil {
		t.Error("ParsePeriodic accepted a payload that is not an object")
	}
	pj, err := skiplock.ParsePeriodic("nightly", "CRON_TZ=Europe/Paris 0 2 * * *", "janitor", nil)
	if err != nil || pj.Kind != "janitor" {
		t.Fatalf("ParsePeriodic: %+v, %v", pj, err)
	}
}

// nilDriver is a driver that is never called: NewClient only keeps it.
type nilDriver struct{ driver.FullDriver }

func TestWorkflowSchedulesEnqueueAndOutliveJobs(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, true, nil) // a server: maintenance only
		due := time.Now().Add(-90 * time.Minute).Truncate(time.Second)
		upsert := func(at time.Time) {
			t.Helper()
			if _, err := c.ScheduleUpsert(b.ctx, &skiplock.Schedule{Tenant: "acme", Key: "video:v1", Kind: "wf_track",
				Queue: "tracking", Payload: []byte(`{"video_id": "v1"}`), Every: time.Hour, NextRunAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		upsert(due)
		eventually(t, "the schedule's job", func() bool { return len(b.jobsOfKind(t, "wf_track")) == 1 })
		j := b.jobsOfKind(t, "wf_track")[0]
		if j.Tenant != "acme" || j.Queue != "tracking" || j.IdempotencyKey != fmt.Sprintf("schedule:video:v1:%d", due.Unix()) {
			t.Fatalf("job %+v", j)
		}
		tenant := "acme"
		list, err := c.ScheduleList(b.ctx, &tenant)
		if err != nil || len(list) != 1 || !list[0].NextRunAt.Equal(due.Add(2*time.Hour)) {
			t.Fatalf("schedules %+v, %v; want next run %s (missed interval skipped)", list, err, due.Add(2*time.Hour))
		}
		time.Sleep(200 * time.Millisecond) // several enqueuer runs: nothing more is due
		if n := len(b.jobsOfKind(t, "wf_track")); n != 1 {
			t.Fatalf("%d jobs, want 1", n)
		}
		// The entity's jobs go (retention, janitor); its schedule stays.
		wfDeleteAllJobs(t, b)
		upsert(time.Now().Add(-time.Second).Truncate(time.Second)) // time passes
		eventually(t, "the next run's job", func() bool { return len(b.jobsOfKind(t, "wf_track")) == 1 })
		if list, err := c.ScheduleList(b.ctx, nil); err != nil || len(list) != 1 {
			t.Fatalf("schedules %+v, %v", list, err)
		}
		if err := c.ScheduleDelete(b.ctx, "acme", "video:v1"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ScheduleUpsert(b.ctx, &skiplock.Schedule{Key: "k", Kind: "wf_track", Every: time.Millisecond}); err == nil {
			t.Fatal("schedule every 1ms accepted")
		}
	})
}

// wfDeleteAllJobs deletes every job, live and archived, with the database's
// own handle (PostgreSQL pool or SQLite *sql.DB).
func wfDeleteAllJobs(t *testing.T, b *wfBundle) {
	t.Helper()
	var exec func(string) error
	if p, ok := b.drv.(pgPooled); ok {
		exec = func(sql string) error { _, err := p.Pool().Exec(b.ctx, sql); return err }
	} else if s, ok := b.drv.(sqlDBer); ok {
		exec = func(sql string) error { _, err := s.DB().ExecContext(b.ctx, sql); return err }
	} else {
		t.Skipf("driver %s: no raw handle to delete jobs with", b.drv.Name())
	}
	for _, sql := range []string{"DELETE FROM skiplock_jobs", "DELETE FROM skiplock_jobs_archive", "DELETE FROM skiplock_unique_keys"} {
		if err := exec(sql); err != nil {
			t.Fatal(err)
		}
	}
}

type pgPooled interface{ Pool() *pgxpool.Pool }

type sqlDBer interface{ DB() *sql.DB }

// A job asked to cancel ends cancelled even when its worker returns nil,
// and the next stages it asked for are not inserted.
func TestWorkflowCancelledJobStartsNoNextStage(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		started := make(chan struct{})
		c := b.client(t, true, func(c *skiplock.Config) {
			c.Queues = map[string]skiplock.QueueConfig{"default": {MaxWorkers: 2}}
			c.Workers = skiplock.NewWorkers()
			skiplock.MustAddWorker(c.Workers, skiplock.WorkFunc[holdArgs](func(ctx context.Context, j *skiplock.Job[holdArgs]) error {
				j.Next(taskArgs{Name: "after-cancel"}, nil)
				close(started)
				<-ctx.Done()
				return nil // ignores the cancel and "succeeds"
			}))
		})
		j := b.insert(t, c, holdArgs{}, &skiplock.InsertOpts{WorkflowID: "wf-cancel"})
		<-started
		if _, err := c.JobCancel(b.ctx, j.ID); err != nil {
			t.Fatal(err)
		}
		b.waitState(t, j.ID, skiplock.StateCancelled)
		if next := b.jobsOfKind(t, taskArgs{}.Kind()); len(next) != 0 {
			t.Fatalf("a cancelled job inserted its next stage: %+v", next[0])
		}
	})
}

// sameJSON compares JSON by value: PostgreSQL's jsonb and SQLite format it
// differently.
func sameJSON(got json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil &&
		fmt.Sprint(a) == fmt.Sprint(b)
}
