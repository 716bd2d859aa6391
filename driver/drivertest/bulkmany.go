package drivertest

import (
	"errors"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// bulkWorld is one job in each state a bulk action meets, made twice (twin
// "a" and twin "b") so that a single action on one twin and the set-based
// action on the other can be compared job by job. Kinds carry the twin's
// name, so that each twin claims only its own jobs.
type bulkWorld struct {
	jobs map[string]*driver.Job
	// dependent waits for "pending" and is in no action's list: it settles
	// when its parent is cancelled.
	dependent *driver.Job
}

var bulkNames = []string{"scheduled", "waiting", "pending", "running", "running_cancel", "paused",
	"completed", "failed", "cancelled", "failed_key_held", "cancelled_waits"}

func (e *env) bulkWorld(twin string) bulkWorld {
	e.t.Helper()
	w := bulkWorld{jobs: map[string]*driver.Job{}}
	mk := func(name string, p *driver.InsertParams) *driver.Job {
		j := e.insert(p)
		w.jobs[name] = j
		return j
	}
	k := func(name string) *driver.InsertParams { return job(twin + "-" + name) }
	sched := k("scheduled")
	sched.RunAt = time.Now().Add(time.Hour)
	mk("scheduled", sched)
	parent := e.insert(k("parent")) // pending for good: its dependents wait
	waiting := k("waiting")
	waiting.DependsOn = []int64{parent.ID}
	mk("waiting", waiting)
	pending := mk("pending", k("pending"))
	dep := k("dependent")
	dep.DependsOn = []int64{pending.ID}
	w.dependent = e.insert(dep)
	w.jobs["running"] = e.claimID(mk("running", k("running")), "w-"+twin, lease)
	w.jobs["running_cancel"] = e.claimID(mk("running_cancel", k("running_cancel")), "w-"+twin, lease)
	if _, err := e.admin().JobCancel(e.ctx, w.jobs["running_cancel"].ID); err != nil {
		e.t.Fatalf("cancel running job: %v", err)
	}
	paused := k("paused")
	paused.Paused = true
	mk("paused", paused)
	e.complete(e.claimID(mk("completed", k("completed")), "w-"+twin, lease), "")
	e.failFinal(e.claimID(mk("failed", k("failed")), "w-"+twin, lease), "boom")
	if _, err := e.admin().JobCancel(e.ctx, mk("cancelled", k("cancelled")).ID); err != nil {
		e.t.Fatalf("cancel: %v", err)
	}
	// A failed job whose idempotency key a live job took since.
	keyed := k("failed_key_held")
	keyed.IdempotencyKey, keyed.UniquePolicy = "key-"+twin, "active"
	e.failFinal(e.claimID(mk("failed_key_held", keyed), "w-"+twin, lease), "boom")
	holder := k("key_holder")
	holder.IdempotencyKey, holder.UniquePolicy = "key-"+twin, "active"
	e.insert(holder)
	// A job cancelled while it waited for a parent that has not finished
	// since: retried, it waits again.
	cw := k("cancelled_waits")
	cw.DependsOn = []int64{e.insert(k("grandparent")).ID}
	if _, err := e.admin().JobCancel(e.ctx, mk("cancelled_waits", cw).ID); err != nil {
		e.t.Fatalf("cancel waiting job: %v", err)
	}
	return w
}

func (w bulkWorld) ids() []int64 {
	var out []int64
	for _, name := range bulkNames {
		out = append(out, w.jobs[name].ID)
	}
	return out
}

// singleAction runs the single action on a job as the library runs it.
func (e *env) singleAction(action string, id int64) error {
	switch action {
	case "cancel":
		_, err := e.admin().JobCancel(e.ctx, id)
		return err
	case "pause":
		_, err := e.admin().JobPause(e.ctx, id)
		if !errors.Is(err, driver.ErrWrongState) {
			return err
		}
		if _, rerr := e.stops().JobRequestPause(e.ctx, id); rerr == nil {
			return nil
		}
		return err
	case "resume":
		_, err := e.admin().JobResume(e.ctx, id)
		return err
	default:
		_, err := e.admin().JobRetry(e.ctx, id)
		return err
	}
}

func (e *env) manyAction(action string, ids []int64) []*driver.Job {
	e.t.Helper()
	return e.chunkAction(action, driver.Chunk{IDs: ids})
}

func (e *env) chunkAction(action string, c driver.Chunk) []*driver.Job {
	e.t.Helper()
	act := map[string]func(driver.BulkStore) ([]*driver.Job, error){
		"cancel": func(s driver.BulkStore) ([]*driver.Job, error) { return s.JobCancelMany(e.ctx, c) },
		"pause":  func(s driver.BulkStore) ([]*driver.Job, error) { return s.JobPauseMany(e.ctx, c) },
		"resume": func(s driver.BulkStore) ([]*driver.Job, error) { return s.JobResumeMany(e.ctx, c) },
		"retry":  func(s driver.BulkStore) ([]*driver.Job, error) { return s.JobRetryMany(e.ctx, c) },
	}[action]
	jobs, err := act(e.bulk())
	if err != nil {
		e.t.Fatalf("%s many: %v", action, err)
	}
	return jobs
}

// bulkFacts is what must match between a job acted on singly and its twin
// acted on in a set.
type bulkFacts struct {
	State                       driver.JobState
	CancelRequested, PauseAsked bool
	Attempt, MaxRetries, Base   int
	Errors                      int
	Finished, Started, Beat     bool
}

func (e *env) bulkFacts(id int64) bulkFacts {
	e.t.Helper()
	j, err := e.d.JobGet(e.ctx, id)
	if errors.Is(err, driver.ErrNotFound) {
		return bulkFacts{State: "gone"}
	}
	if err != nil {
		e.t.Fatalf("JobGet(%d): %v", id, err)
	}
	reqs, err := e.stops().JobStopRequests(e.ctx, []int64{id})
	if err != nil {
		e.t.Fatal(err)
	}
	return bulkFacts{State: j.State, CancelRequested: j.CancelRequested, PauseAsked: len(reqs) == 1 && reqs[0].Pause,
		Attempt: j.Attempt, MaxRetries: j.MaxRetries, Base: j.AttemptBase, Errors: len(j.Errors), Finished: j.FinishedAt != nil,
		Started: j.StartedAt != nil, Beat: j.HeartbeatAt != nil}
}

var _ = add("BulkManyMatchSingle", func(e *env) {
	for _, action := range []string{"cancel", "pause", "resume", "retry"} {
		a, b := e.bulkWorld(action+"a"), e.bulkWorld(action+"b")
		singleDone := map[string]bool{}
		for _, name := range bulkNames {
			singleDone[name] = e.singleAction(action, a.jobs[name].ID) == nil
		}
		got := e.manyAction(action, b.ids())
		manyDone := map[string]bool{}
		for _, j := range got {
			for name, bj := range b.jobs {
				if bj.ID == j.ID {
					manyDone[name] = true
					if after := e.bulkFacts(j.ID); after.State != j.State {
						e.t.Fatalf("%s %s: answered %s, stored %s", action, name, j.State, after.State)
					}
				}
			}
		}
		for _, name := range bulkNames {
			if singleDone[name] != manyDone[name] {
				e.t.Fatalf("%s %s: done singly %v, in a set %v", action, name, singleDone[name], manyDone[name])
			}
			fa, fb := e.bulkFacts(a.jobs[name].ID), e.bulkFacts(b.jobs[name].ID)
			if fa != fb {
				e.t.Fatalf("%s %s: singly %+v, in a set %+v", action, name, fa, fb)
			}
		}
		if fa, fb := e.bulkFacts(a.dependent.ID), e.bulkFacts(b.dependent.ID); fa != fb {
			e.t.Fatalf("%s: dependent singly %+v, in a set %+v", action, fa, fb)
		}
		if action == "cancel" {
			// The dependent of a cancelled job went with it.
			e.wantState(b.dependent.ID, driver.StateCancelled)
		}
		if action == "retry" {
			e.wantState(b.jobs["cancelled_waits"].ID, driver.StateWaiting)
			e.wantState(b.jobs["failed_key_held"].ID, driver.StateFailed)
		}
	}
})

var _ = add("BulkManyChunks", func(e *env) {
	var ids []int64
	for range 7 {
		ids = append(ids, e.insert(job("chunk")).ID)
	}
	// Two chunks, the second overlapping the first: a job already paused
	// is not paused again.
	first := e.manyAction("pause", ids[:4])
	second := e.manyAction("pause", ids[3:])
	if len(first) != 4 || len(second) != 3 {
		e.t.Fatalf("pause chunks: %d then %d jobs, want 4 then 3", len(first), len(second))
	}
	for _, id := range ids {
		e.wantState(id, driver.StatePaused)
	}
	if got := e.manyAction("resume", append(slices.Clone(ids), 1<<40)); len(got) != 7 {
		e.t.Fatalf("resume: %d jobs, want 7", len(got))
	}
	cancelled := e.manyAction("cancel", ids)
	for _, j := range cancelled {
		if j.State != driver.StateCancelled || j.FinishedAt == nil {
			e.t.Fatalf("cancelled job %d: %s, finished %v", j.ID, j.State, j.FinishedAt)
		}
	}
	retried := e.manyAction("retry", ids)
	if len(retried) != 7 {
		e.t.Fatalf("retry: %d jobs, want 7", len(retried))
	}
	for _, j := range retried {
		if j.State != driver.StatePending {
			e.t.Fatalf("retried job %d: %s", j.ID, j.State)
		}
	}
	// The jobs are live once: a second retry finds none archived.
	if got := e.manyAction("retry", ids); len(got) != 0 {
		e.t.Fatalf("second retry: %d jobs", len(got))
	}
})

// Two archived jobs sharing an idempotency key: the set-based retry takes
// the first and leaves the second, as two single retries do.
var _ = add("BulkManyRetrySharedKey", func(e *env) {
	var ids []int64
	for range 2 {
		p := job("keyed")
		p.IdempotencyKey, p.UniquePolicy = "same", "active"
		ids = append(ids, e.failFinal(e.claimID(e.insert(p), "w1", lease), "boom").ID)
	}
	got := e.manyAction("retry", ids)
	if len(got) != 1 || got[0].ID != ids[0] {
		e.t.Fatalf("retry of two jobs sharing a key: %v, want [%d]", ids, ids[0])
	}
	e.wantState(ids[0], driver.StatePending)
	e.wantState(ids[1], driver.StateFailed)
})

// BulkManyChunkConditions: a chunk's states and finish time are checked
// as the statement acts, so a job that left the filter that picked it is
// left alone, on every action.
var _ = add("BulkManyChunkConditions", func(e *env) {
	states := func(s ...driver.JobState) []driver.JobState { return s }
	done := func(jobs []*driver.Job) []int64 {
		ids := driver.JobIDs(jobs)
		slices.Sort(ids)
		return ids
	}
	pausedP := job("cond")
	pausedP.Paused = true
	pending, paused := e.insert(job("cond")), e.insert(pausedP)
	running := e.claimID(e.insert(job("cond-run")), "w1", lease)
	live := []int64{pending.ID, paused.ID, running.ID}

	// Cancel and pause, narrowed to one state: the others stay as they are.
	if got := done(e.chunkAction("cancel", driver.Chunk{IDs: live, States: states(driver.StatePaused)})); !slices.Equal(got, []int64{paused.ID}) {
		e.t.Fatalf("cancel paused only: acted on %v, want [%d]", got, paused.ID)
	}
	e.wantState(pending.ID, driver.StatePending)
	if j := e.wantState(running.ID, driver.StateRunning); j.CancelRequested {
		e.t.Fatal("cancel paused only: the running job was asked to cancel")
	}
	if got := done(e.chunkAction("pause", driver.Chunk{IDs: live, States: states(driver.StateRunning)})); !slices.Equal(got, []int64{running.ID}) {
		e.t.Fatalf("pause running only: acted on %v, want [%d]", got, running.ID)
	}
	e.wantState(pending.ID, driver.StatePending)
	if got := e.chunkAction("resume", driver.Chunk{IDs: live, States: states(driver.StatePending)}); len(got) != 0 {
		e.t.Fatalf("resume narrowed to pending: acted on %v", driver.JobIDs(got))
	}

	// The archive: failed and cancelled, narrowed by state and by finish.
	failed := e.failFinal(e.claimID(e.insert(job("cond-fail")), "w1", lease), "boom")
	cancelled, err := e.admin().JobCancel(e.ctx, e.insert(job("cond")).ID)
	if err != nil {
		e.t.Fatal(err)
	}
	failed, cancelled = e.get(failed.ID), e.get(cancelled.ID)
	if !failed.FinishedAt.Before(*cancelled.FinishedAt) {
		e.t.Fatalf("finished at %v and then %v", failed.FinishedAt, cancelled.FinishedAt)
	}
	archived := []int64{failed.ID, cancelled.ID}
	if got := done(e.chunkAction("retry", driver.Chunk{IDs: archived, States: states(driver.StateCancelled)})); !slices.Equal(got, []int64{cancelled.ID}) {
		e.t.Fatalf("retry cancelled only: acted on %v, want [%d]", got, cancelled.ID)
	}
	e.wantState(failed.ID, driver.StateFailed)
	if got := e.chunkAction("retry", driver.Chunk{IDs: archived, FinishedBefore: *failed.FinishedAt}); len(got) != 0 {
		e.t.Fatalf("retry of jobs finished before the first finish: acted on %v", driver.JobIDs(got))
	}
	// Finished again after the first finish: a delete of what finished
	// before the second finish takes the first job only.
	again, err := e.admin().JobCancel(e.ctx, cancelled.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	before := *e.get(again.ID).FinishedAt
	gone, err := e.bulk().JobDeleteArchived(e.ctx, driver.Chunk{IDs: archived, FinishedBefore: before})
	if err != nil || !slices.Equal(gone, []int64{failed.ID}) {
		e.t.Fatalf("delete finished before %v: %v, %v; want [%d]", before, gone, err, failed.ID)
	}
	gone, err = e.bulk().JobDeleteArchived(e.ctx, driver.Chunk{IDs: archived, States: states(driver.StateCompleted)})
	if err != nil || len(gone) != 0 {
		e.t.Fatalf("delete narrowed to completed: %v, %v; want none", gone, err)
	}
	e.wantState(again.ID, driver.StateCancelled)
})
