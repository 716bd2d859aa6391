package drivertest

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
)

// failHeld reports a failed attempt of j: retryable or not, each kind
// waiting as its own wait says.
func failHeld(j *driver.Job, retryable bool) driver.FailParams {
	return driver.FailParams{HeldJob: held(j), Wait: time.Hour,
		WaitKinds: []string{"now"}, Waits: []time.Duration{0},
		Error: driver.AttemptError{Attempt: j.Attempt, Type: "boom", Message: "it broke",
			At: time.Now().UTC().Truncate(time.Millisecond), Retryable: retryable}}
}

// failer is one way a failed attempt is stored: outcome's statements in a
// transaction, or a driver's one statement (driver.FailStore).
type failer struct {
	name string
	fail func(context.Context, driver.FailParams) (*driver.Job, error)
}

func (e *env) failers() []failer {
	out := []failer{{"outcome.FailJob", func(ctx context.Context, p driver.FailParams) (*driver.Job, error) {
		return outcome.FailJob(ctx, e.d, p)
	}}}
	if fs, err := driver.As[driver.FailStore](e.d); err == nil {
		out = append(out, failer{"JobFail", fs.JobFail})
	}
	return out
}

// Every way of storing a failure ends the attempt as outcome.Decide says,
// over the same table of cases: cancel and pause requests, a retry asked
// or not, retries left or not.
var _ = add("Fail applies outcome.Decide", func(e *env) {
	for _, f := range e.failers() {
		for c := range 16 {
			cancel, pause, retry, last := c&1 != 0, c&2 != 0, c&4 != 0, c&8 != 0
			name := fmt.Sprintf("%s cancel=%t pause=%t retry=%t last=%t", f.name, cancel, pause, retry, last)
			spec := job("now")
			spec.Queue = name // a job retried at once is not claimed again by the next case
			if last {
				spec.MaxRetries = 0
			}
			j := e.claimID(e.insert(spec), "w1", lease)
			if pause { // before the cancel: a job asked to cancel is not asked to pause
				if _, err := e.stops().JobRequestPause(e.ctx, j.ID); err != nil {
					e.t.Fatalf("%s: %v", name, err)
				}
			}
			if cancel {
				if _, err := e.admin().JobCancel(e.ctx, j.ID); err != nil {
					e.t.Fatalf("%s: %v", name, err)
				}
			}
			d := outcome.Decide(outcome.Report{Retry: retry}, driver.HeldState{Attempt: j.Attempt,
				MaxRetries: spec.MaxRetries, CancelRequested: cancel, PauseRequested: pause})
			got, err := f.fail(e.ctx, failHeld(j, retry))
			if err != nil {
				e.t.Fatalf("%s: %v", name, err)
			}
			e.wantDecided(name, got, j, d)
			if read := e.get(j.ID); !reflect.DeepEqual(read, got) {
				e.t.Fatalf("%s: answered\n%+v\nJobGet reads\n%+v", name, got, read)
			}
		}
	}
})

// wantDecided checks that got, j after its failed attempt, ended as d says.
func (e *env) wantDecided(name string, got, j *driver.Job, d outcome.Decision) {
	e.t.Helper()
	state, attempt, entries := map[outcome.End]driver.JobState{outcome.EndRetry: driver.StatePending,
		outcome.EndPause: driver.StatePaused, outcome.EndCancel: driver.StateCancelled,
		outcome.EndFail: driver.StateFailed}[d.End], j.Attempt, 1
	if d.End == outcome.EndPause {
		attempt, entries = j.Attempt-1, 0
	}
	live := state == driver.StatePending || state == driver.StatePaused
	if got.State != state || got.Attempt != attempt || len(got.Errors) != entries || got.LeaseUntil != nil ||
		live && got.WorkerID != "" {
		e.t.Fatalf("%s: %+v, want %s at attempt %d with %d error entries", name, got, state, attempt, entries)
	}
	if entries == 1 && (got.Errors[0].Retryable != d.Retryable || got.Errors[0].Type != "boom") {
		e.t.Fatalf("%s: entry %+v, want retryable %t", name, got.Errors[0], d.Retryable)
	}
	if live == (got.FinishedAt != nil) {
		e.t.Fatalf("%s: finished_at %v", name, got.FinishedAt)
	}
}

// A retry waits as its kind's wait says (the default, else the kind's own),
// and either way answers the row JobGet reads afterwards.
var _ = add("Fail waits as the kind's wait says", func(e *env) {
	for _, f := range e.failers() {
		laterSpec, nowSpec := job("a"), job("now")
		laterSpec.Queue, nowSpec.Queue = f.name, f.name
		later := e.claimID(e.insert(laterSpec), "w1", lease)
		got, err := f.fail(e.ctx, failHeld(later, true))
		if err != nil || got.State != driver.StateScheduled || got.RunAt.Before(time.Now().Add(50*time.Minute)) {
			e.t.Fatalf("%s: retried job: %+v, %v", f.name, got, err)
		}
		if read := e.get(later.ID); !reflect.DeepEqual(read, got) {
			e.t.Fatalf("%s: answered\n%+v\nJobGet reads\n%+v", f.name, got, read)
		}
		j := e.claimID(e.insert(nowSpec), "w1", lease)
		if got, err = f.fail(e.ctx, failHeld(j, true)); err != nil || got.State != driver.StatePending {
			e.t.Fatalf("%s: a kind without wait: %+v, %v", f.name, got, err)
		}
	}
})

// Snoozed, a job asked to cancel ends cancelled and one asked to pause is
// paused, as outcome.Decide says; its attempt is unspent either way but
// the cancel's.
var _ = add("Snooze applies outcome.Decide", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	if _, err := e.stops().JobRequestPause(e.ctx, j.ID); err != nil {
		e.t.Fatal(err)
	}
	got, err := outcome.SnoozeJob(e.ctx, e.d, driver.SnoozeParams{HeldJob: held(j), RunAt: time.Now()})
	if err != nil || got.State != driver.StatePaused || got.Attempt != 0 || len(got.Errors) != 0 {
		e.t.Fatalf("snooze a job asked to pause: %+v, %v", got, err)
	}
	j = e.claimID(e.insert(job("a")), "w1", lease)
	if _, err := e.admin().JobCancel(e.ctx, j.ID); err != nil {
		e.t.Fatal(err)
	}
	if got, err = outcome.SnoozeJob(e.ctx, e.d, driver.SnoozeParams{HeldJob: held(j), RunAt: time.Now()}); err != nil ||
		got.State != driver.StateCancelled {
		e.t.Fatalf("snooze a job asked to cancel: %+v, %v", got, err)
	}
})

// A report for another attempt or worker is refused and leaves the job as
// it was; a parent failed for good cancels its waiting dependents.
var _ = add("JobFail is fenced and settles dependents", func(e *env) {
	for _, f := range e.failers() {
		parent := e.claimID(e.insert(job("p")), "w1", lease)
		for _, h := range []driver.HeldJob{{ID: parent.ID, Attempt: parent.Attempt + 1, WorkerID: "w1"},
			{ID: parent.ID, Attempt: parent.Attempt, WorkerID: "w2"}, {ID: parent.ID + 1000, Attempt: 1, WorkerID: "w1"}} {
			p := failHeld(parent, false)
			p.HeldJob = h
			_, err := f.fail(e.ctx, p)
			e.wantErr(err, driver.ErrLeaseLost, f.name+" as another holder")
		}
		e.wantState(parent.ID, driver.StateRunning)

		childSpec := job("c")
		childSpec.DependsOn = []int64{parent.ID}
		child := e.insert(childSpec)
		if _, err := f.fail(e.ctx, failHeld(parent, false)); err != nil {
			e.t.Fatal(err)
		}
		e.wantState(child.ID, driver.StateCancelled)
	}
})
