package drivertest

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// JobComplete finishes one held job and answers the row as finished, the
// same row JobGet reads afterwards.
var _ = add("JobComplete answers the finished job", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	done, err := e.d.JobComplete(e.ctx, driver.CompleteParams{HeldJob: held(j), Result: json.RawMessage(`{"ok":true}`)})
	if err != nil {
		e.t.Fatalf("JobComplete: %v", err)
	}
	if done.ID != j.ID || done.State != driver.StateCompleted || done.Progress != 100 || done.FinishedAt == nil ||
		done.LeaseUntil != nil || done.Attempt != j.Attempt || done.WorkerID != "w1" {
		e.t.Fatalf("completed job: %+v", done)
	}
	var result map[string]bool
	if err := json.Unmarshal(done.Result, &result); err != nil || !result["ok"] {
		e.t.Fatalf("result %s, want {\"ok\": true}", done.Result)
	}
	if got := e.get(j.ID); !reflect.DeepEqual(got, done) {
		e.t.Fatalf("JobComplete answered\n%+v\nJobGet reads\n%+v", done, got)
	}
	_, err = e.d.JobComplete(e.ctx, driver.CompleteParams{HeldJob: held(j)})
	e.wantErr(err, driver.ErrLeaseLost, "complete twice")
})

// A report for another attempt or worker is refused and leaves the job as
// it was.
var _ = add("JobComplete is fenced on worker and attempt", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	for _, h := range []driver.HeldJob{{ID: j.ID, Attempt: j.Attempt + 1, WorkerID: "w1"},
		{ID: j.ID, Attempt: j.Attempt, WorkerID: "w2"}} {
		_, err := e.d.JobComplete(e.ctx, driver.CompleteParams{HeldJob: h})
		e.wantErr(err, driver.ErrLeaseLost, "complete as another holder")
	}
	e.wantState(j.ID, driver.StateRunning)
	_, err := e.d.JobComplete(e.ctx, driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID + 1000, Attempt: 1, WorkerID: "w1"}})
	e.wantErr(err, driver.ErrLeaseLost, "complete an unknown job")
})

// A job asked to cancel ends cancelled; a completed parent releases its
// waiting dependents.
var _ = add("JobComplete cancels on request and releases dependents", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	if _, err := need[driver.AdminStore](e, e.d).JobCancel(e.ctx, j.ID); err != nil {
		e.t.Fatal(err)
	}
	done, err := e.d.JobComplete(e.ctx, driver.CompleteParams{HeldJob: held(j)})
	if err != nil || done.State != driver.StateCancelled {
		e.t.Fatalf("complete a job asked to cancel: %+v, %v", done, err)
	}

	parent := e.claimID(e.insert(job("p")), "w1", lease)
	childSpec := job("c")
	childSpec.DependsOn = []int64{parent.ID}
	child := e.insert(childSpec)
	if child.State != driver.StateWaiting {
		e.t.Fatalf("child: state %s, want waiting", child.State)
	}
	if _, err := e.d.JobComplete(e.ctx, driver.CompleteParams{HeldJob: held(parent)}); err != nil {
		e.t.Fatal(err)
	}
	e.wantState(child.ID, driver.StatePending)
})

// A job failed by the rescuer may still be running on its worker. Retried
// by hand and claimed again by that same worker, it runs as a new attempt:
// the first run's late report is refused and leaves the new run alone.
var _ = add("RetriedJobRefusesTheLostRunsReport", func(e *env) {
	last := job("a")
	last.MaxRetries = 0
	first := e.claimID(e.insert(last), "w1", time.Second)
	time.Sleep(1200 * time.Millisecond) // the lease runs out
	if res, err := e.d.JobRescue(e.ctx, 100, time.Time{}); err != nil || res.Failed != 1 {
		e.t.Fatalf("rescue: %+v, %v; want one failed", res, err)
	}
	if _, err := e.admin().JobRetry(e.ctx, first.ID); err != nil {
		e.t.Fatal(err)
	}
	second := e.claimID(first, "w1", lease)
	if second.Attempt == first.Attempt || second.MaxRetries != 1 {
		e.t.Fatalf("claimed after the retry: attempt %d max_retries %d, want attempt 2 of a budget of one run",
			second.Attempt, second.MaxRetries)
	}
	_, err := e.d.JobComplete(e.ctx, driver.CompleteParams{HeldJob: held(first)})
	e.wantErr(err, driver.ErrLeaseLost, "the lost run's report")
	e.wantState(first.ID, driver.StateRunning)
	e.complete(second, "")
})
