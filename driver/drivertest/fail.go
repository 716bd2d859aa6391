package drivertest

import (
	"reflect"
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e *env) fails() driver.FailStore { return need[driver.FailStore](e, e.d) }

// failHeld reports a failed attempt of j: retryable or not, each kind
// waiting as its own wait says.
func failHeld(j *driver.Job, retryable bool) driver.FailHeldParams {
	return driver.FailHeldParams{HeldJob: held(j), Wait: time.Hour,
		WaitKinds: []string{"now"}, Waits: []time.Duration{0},
		Error: driver.AttemptError{Attempt: j.Attempt, Type: "boom", Message: "it broke",
			At: time.Now().UTC().Truncate(time.Millisecond), Retryable: retryable}}
}

// The statement decides as driver/outcome does: retried while retries are
// left, after its kind's wait; failed for good otherwise. It answers the
// row JobGet reads afterwards.
var _ = add("JobFail retries after the kind's wait, then fails", func(e *env) {
	later := e.claimID(e.insert(job("a")), "w1", lease)
	got, err := e.fails().JobFail(e.ctx, failHeld(later, true))
	if err != nil {
		e.t.Fatalf("JobFail: %v", err)
	}
	if got.State != driver.StateScheduled || got.WorkerID != "" || got.LeaseUntil != nil || got.Attempt != 1 ||
		got.RunAt.Before(time.Now().Add(50*time.Minute)) || len(got.Errors) != 1 || !got.Errors[0].Retryable ||
		got.Errors[0].Type != "boom" {
		e.t.Fatalf("retried job: %+v", got)
	}
	if read := e.get(later.ID); !reflect.DeepEqual(read, got) {
		e.t.Fatalf("JobFail answered\n%+v\nJobGet reads\n%+v", got, read)
	}

	spec := job("now")
	spec.MaxRetries = 1
	j := e.claimID(e.insert(spec), "w1", lease)
	if got, err = e.fails().JobFail(e.ctx, failHeld(j, true)); err != nil || got.State != driver.StatePending {
		e.t.Fatalf("a kind without wait: %+v, %v", got, err)
	}
	j = e.claimID(j, "w1", lease) // attempt 2 of max_retries 1: the last
	got, err = e.fails().JobFail(e.ctx, failHeld(j, true))
	if err != nil || got.State != driver.StateFailed || got.FinishedAt == nil || len(got.Errors) != 2 ||
		got.Errors[1].Retryable || got.Errors[1].Attempt != 2 {
		e.t.Fatalf("out of retries: %+v, %v", got, err)
	}

	j = e.claimID(e.insert(job("now")), "w1", lease)
	if got, err = e.fails().JobFail(e.ctx, failHeld(j, false)); err != nil || got.State != driver.StateFailed {
		e.t.Fatalf("not retryable: %+v, %v", got, err)
	}
})

// Asked to cancel, the job ends cancelled; asked to pause, paused with its
// attempt unspent.
var _ = add("JobFail honours cancel and pause requests", func(e *env) {
	j := e.claimID(e.insert(job("now")), "w1", lease)
	if _, err := need[driver.AdminStore](e, e.d).JobCancel(e.ctx, j.ID); err != nil {
		e.t.Fatal(err)
	}
	got, err := e.fails().JobFail(e.ctx, failHeld(j, true))
	if err != nil || got.State != driver.StateCancelled || len(got.Errors) != 1 || !got.Errors[0].Retryable {
		e.t.Fatalf("fail a job asked to cancel: %+v, %v", got, err)
	}

	j = e.claimID(e.insert(job("now")), "w1", lease)
	if _, err := e.stops().JobRequestPause(e.ctx, j.ID); err != nil {
		e.t.Fatal(err)
	}
	got, err = e.fails().JobFail(e.ctx, failHeld(j, true))
	if err != nil || got.State != driver.StatePaused || got.Attempt != 0 || len(got.Errors) != 0 || got.WorkerID != "" {
		e.t.Fatalf("fail a job asked to pause: %+v, %v", got, err)
	}
})

// A report for another attempt or worker is refused and leaves the job as
// it was; a parent failed for good cancels its waiting dependents.
var _ = add("JobFail is fenced and settles dependents", func(e *env) {
	parent := e.claimID(e.insert(job("p")), "w1", lease)
	for _, h := range []driver.HeldJob{{ID: parent.ID, Attempt: parent.Attempt + 1, WorkerID: "w1"},
		{ID: parent.ID, Attempt: parent.Attempt, WorkerID: "w2"}, {ID: parent.ID + 1000, Attempt: 1, WorkerID: "w1"}} {
		p := failHeld(parent, false)
		p.HeldJob = h
		_, err := e.fails().JobFail(e.ctx, p)
		e.wantErr(err, driver.ErrLeaseLost, "fail as another holder")
	}
	e.wantState(parent.ID, driver.StateRunning)

	childSpec := job("c")
	childSpec.DependsOn = []int64{parent.ID}
	child := e.insert(childSpec)
	if _, err := e.fails().JobFail(e.ctx, failHeld(parent, false)); err != nil {
		e.t.Fatal(err)
	}
	e.wantState(child.ID, driver.StateCancelled)
})
