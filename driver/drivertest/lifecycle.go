package drivertest

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
)

var _ = add("FailRetriesThenFails", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	out, err := outcome.FailJob(e.ctx, e.d, driver.FailParams{HeldJob: held(j), Error: attemptError(j, "boom 1", true)})
	if err != nil || out.State != driver.StatePending || out.Attempt != 1 || out.WorkerID != "" || out.LeaseUntil != nil {
		e.t.Fatalf("fail with a due retry: %+v, %v, want pending", out, err)
	}
	if len(out.Errors) != 1 || out.Errors[0].Message != "boom 1" || !out.Errors[0].Retryable || out.Errors[0].Attempt != 1 {
		e.t.Fatalf("errors %+v", out.Errors)
	}
	j = e.claimID(j, "w1", lease)
	if j.Attempt != 2 {
		e.t.Fatalf("second claim: attempt %d", j.Attempt)
	}
	before := time.Now().Add(time.Hour)
	out, err = outcome.FailJob(e.ctx, e.d, driver.FailParams{HeldJob: held(j), Error: attemptError(j, "boom 2", true), Wait: time.Hour})
	if err != nil || out.State != driver.StateScheduled || out.RunAt.Before(before.Add(-time.Millisecond)) ||
		out.RunAt.After(time.Now().Add(time.Hour)) {
		e.t.Fatalf("fail with a later retry: %+v, %v, want scheduled an hour on", out, err)
	}
	other := e.claimID(e.insert(job("a")), "w1", lease)
	out = e.failFinal(other, "fatal")
	if out.State != driver.StateFailed || out.FinishedAt == nil || len(out.Errors) != 1 || out.Errors[0].Message != "fatal" {
		e.t.Fatalf("fail for good: %+v", out)
	}
	archived := e.wantState(other.ID, driver.StateFailed)
	if len(archived.Errors) != 1 || archived.Errors[0].Type != "test" || archived.Errors[0].At.IsZero() {
		e.t.Fatalf("archived errors %+v", archived.Errors)
	}
})

var _ = add("SnoozeSpendsNoAttempt", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	at := time.Now().Add(time.Hour)
	out, err := outcome.SnoozeJob(e.ctx, e.d, driver.SnoozeParams{HeldJob: held(j), RunAt: at})
	if err != nil || out.State != driver.StateScheduled || out.Attempt != 0 || len(out.Errors) != 0 {
		e.t.Fatalf("snooze: %+v, %v, want scheduled, attempt 0", out, err)
	}
	j = e.claimID(e.insert(job("a")), "w1", lease)
	out, err = outcome.SnoozeJob(e.ctx, e.d, driver.SnoozeParams{HeldJob: held(j), RunAt: time.Now()})
	if err != nil || out.State != driver.StatePending {
		e.t.Fatalf("snooze until now: %+v, %v, want pending", out, err)
	}
})

var _ = add("Cancel", func(e *env) {
	pending := e.insert(job("a"))
	out, err := e.admin().JobCancel(e.ctx, pending.ID)
	if err != nil || out.State != driver.StateCancelled || out.FinishedAt == nil {
		e.t.Fatalf("cancel pending: %+v, %v", out, err)
	}
	e.wantState(pending.ID, driver.StateCancelled)
	_, err = e.admin().JobCancel(e.ctx, pending.ID)
	e.wantErr(err, driver.ErrWrongState, "cancel a cancelled job")
	_, err = e.admin().JobCancel(e.ctx, 1<<40)
	e.wantErr(err, driver.ErrNotFound, "cancel an unknown job")

	a := e.claimID(e.insert(job("a")), "w1", lease)
	out, err = e.admin().JobCancel(e.ctx, a.ID)
	if err != nil || out.State != driver.StateRunning || !out.CancelRequested {
		e.t.Fatalf("cancel running: %+v, %v, want running with cancel_requested", out, err)
	}
	e.complete(a, "")
	if j := e.wantState(a.ID, driver.StateCancelled); j.FinishedAt == nil {
		e.t.Fatal("cancelled job has no finished_at")
	}
	b := e.claimID(e.insert(job("a")), "w1", lease)
	if _, err := e.admin().JobCancel(e.ctx, b.ID); err != nil {
		e.t.Fatal(err)
	}
	out, err = outcome.FailJob(e.ctx, e.d, driver.FailParams{HeldJob: held(b), Error: attemptError(b, "stopped", true)})
	if err != nil || out.State != driver.StateCancelled {
		e.t.Fatalf("fail after cancel: %+v, %v, want cancelled", out, err)
	}
	c := e.claimID(e.insert(job("a")), "w1", lease)
	if _, err := e.admin().JobCancel(e.ctx, c.ID); err != nil {
		e.t.Fatal(err)
	}
	out, err = outcome.SnoozeJob(e.ctx, e.d, driver.SnoozeParams{HeldJob: held(c), RunAt: time.Now()})
	if err != nil || out.State != driver.StateCancelled {
		e.t.Fatalf("snooze after cancel: %+v, %v, want cancelled", out, err)
	}
})

// A retry keeps the attempt number counting and gives the job its budget
// again: max_retries moves up by the attempts spent since the last retry.
// The attempt that failed leaves no start, heartbeat, lease or worker.
var _ = add("ManualRetry", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	e.failFinal(j, "fatal")
	out, err := e.admin().JobRetry(e.ctx, j.ID)
	if err != nil || out.State != driver.StatePending || out.Attempt != 1 || out.MaxRetries != 4 ||
		out.AttemptBase != 1 || out.FinishedAt != nil || len(out.Errors) != 1 || out.Errors[0].Message != "fatal" {
		e.t.Fatalf("retry failed job: %+v, %v; want attempt 1, max_retries 4", out, err)
	}
	if out.StartedAt != nil || out.HeartbeatAt != nil || out.LeaseUntil != nil || out.WorkerID != "" {
		e.t.Fatalf("retried job keeps its last attempt's start %v, heartbeat %v, lease %v, worker %q",
			out.StartedAt, out.HeartbeatAt, out.LeaseUntil, out.WorkerID)
	}
	again := e.claimID(j, "w1", lease)
	if again.Attempt != 2 {
		e.t.Fatalf("claimed after a retry as attempt %d, want 2", again.Attempt)
	}
	e.failFinal(again, "fatal again")
	if out, err = e.admin().JobRetry(e.ctx, j.ID); err != nil || out.Attempt != 2 || out.MaxRetries != 5 {
		e.t.Fatalf("second retry: %+v, %v; want attempt 2, max_retries 5 (3 more retries)", out, err)
	}
	e.claimID(j, "w1", lease)
	cancelled := e.insert(job("a"))
	if _, err := e.admin().JobCancel(e.ctx, cancelled.ID); err != nil {
		e.t.Fatal(err)
	}
	if out, err := e.admin().JobRetry(e.ctx, cancelled.ID); err != nil || out.State != driver.StatePending {
		e.t.Fatalf("retry cancelled job: %+v, %v", out, err)
	}
	_, err = e.admin().JobRetry(e.ctx, cancelled.ID)
	e.wantErr(err, driver.ErrWrongState, "retry a pending job")
	_, err = e.admin().JobRetry(e.ctx, 1<<40)
	e.wantErr(err, driver.ErrNotFound, "retry an unknown job")
})

var _ = add("PauseResume", func(e *env) {
	j := e.insert(job("a"))
	if out, err := e.admin().JobPause(e.ctx, j.ID); err != nil || out.State != driver.StatePaused {
		e.t.Fatalf("pause: %+v, %v", out, err)
	}
	if got := e.claim(driver.ClaimParams{}); len(got) != 0 {
		e.t.Fatalf("claimed paused job")
	}
	if out, err := e.admin().JobResume(e.ctx, j.ID); err != nil || out.State != driver.StatePending {
		e.t.Fatalf("resume: %+v, %v", out, err)
	}
	_, err := e.admin().JobResume(e.ctx, j.ID)
	e.wantErr(err, driver.ErrWrongState, "resume a pending job")
	later := job("a")
	later.RunAt = time.Now().Add(time.Hour)
	s := e.insert(later)
	if _, err := e.admin().JobPause(e.ctx, s.ID); err != nil {
		e.t.Fatal(err)
	}
	if out, err := e.admin().JobResume(e.ctx, s.ID); err != nil || out.State != driver.StateScheduled {
		e.t.Fatalf("resume scheduled: %+v, %v", out, err)
	}
	e.claimID(j, "w1", lease)
	_, err = e.admin().JobPause(e.ctx, j.ID)
	e.wantErr(err, driver.ErrWrongState, "pause a running job")
	_, err = e.admin().JobPause(e.ctx, 1<<40)
	e.wantErr(err, driver.ErrNotFound, "pause an unknown job")
})

var _ = add("RescueExpiredLeases", func(e *env) {
	retry := e.insert(job("a"))
	last := job("a")
	last.MaxRetries = 0
	final := e.insert(last)
	cancel := e.insert(job("a"))
	keep := e.insert(job("keep"))
	got := e.claim(driver.ClaimParams{Kinds: []string{"a", "keep"}, Leases: []time.Duration{time.Second, time.Hour}})
	if len(got) != 4 {
		e.t.Fatalf("claimed %v", ids(got))
	}
	if _, err := e.admin().JobCancel(e.ctx, cancel.ID); err != nil {
		e.t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	res, err := e.d.JobRescue(e.ctx, 100, time.Time{})
	if err != nil || res.Requeued != 1 || res.Failed != 1 || res.Cancelled != 1 || !near(res.Now, time.Now(), time.Minute) {
		e.t.Fatalf("rescue: %+v, %v", res, err)
	}
	j := e.wantState(retry.ID, driver.StatePending)
	if j.Attempt != 1 || j.WorkerID != "" || len(j.Errors) != 1 || j.Errors[0].Type != "lease_expired" || !j.Errors[0].Retryable {
		e.t.Fatalf("requeued job: attempt %d worker %q errors %+v", j.Attempt, j.WorkerID, j.Errors)
	}
	j = e.wantState(final.ID, driver.StateFailed)
	if len(j.Errors) != 1 || j.Errors[0].Type != "lease_expired" || j.Errors[0].Retryable {
		e.t.Fatalf("failed job errors %+v", j.Errors)
	}
	e.wantState(cancel.ID, driver.StateCancelled)
	e.wantState(keep.ID, driver.StateRunning)
	if res, err := e.d.JobRescue(e.ctx, 100, time.Time{}); err != nil || res.Requeued+res.Failed+res.Cancelled != 0 {
		e.t.Fatalf("second rescue: %+v, %v", res, err)
	}
})

var _ = add("RescueSince", func(e *env) {
	e.insert(job("a"))
	got := e.claim(driver.ClaimParams{DefaultLease: time.Second})
	if len(got) != 1 {
		e.t.Fatalf("claimed %v", ids(got))
	}
	time.Sleep(1200 * time.Millisecond)
	// The lease expired before since: a bounded pass leaves it.
	res, err := e.d.JobRescue(e.ctx, 100, time.Now().Add(-100*time.Millisecond))
	if err != nil || res.Requeued != 0 {
		e.t.Fatalf("rescue since after the expiry: %+v, %v", res, err)
	}
	e.wantState(got[0].ID, driver.StateRunning)
	res, err = e.d.JobRescue(e.ctx, 100, time.Now().Add(-time.Minute))
	if err != nil || res.Requeued != 1 {
		e.t.Fatalf("rescue since before the expiry: %+v, %v", res, err)
	}
	e.wantState(got[0].ID, driver.StatePending)
})

var _ = add("PromoteScheduled", func(e *env) {
	later := job("a")
	later.RunAt = time.Now().Add(time.Hour)
	l := e.insert(later)
	// A job due soon is scheduled and not promoted before it is due. What
	// "before" means is checked by the clock after the checks: on a machine
	// too slow to make them within the delay, the job is cancelled and the
	// checks run again with a longer one.
	var soon *driver.InsertParams
	var s *driver.Job
	for delay := time.Second; ; delay *= 2 {
		soon = job("a")
		soon.Queue, soon.RunAt = "q1", time.Now().Add(delay)
		s = e.insert(soon)
		got := e.get(s.ID)
		res, err := e.d.JobPromoteScheduled(e.ctx, 100, time.Time{})
		if err != nil {
			e.t.Fatal(err)
		}
		if time.Now().Before(soon.RunAt) {
			if got.State != driver.StateScheduled {
				e.t.Fatalf("job due in %v: %s, want scheduled", delay, got.State)
			}
			if len(res.Queues) != 0 {
				e.t.Fatalf("promote before due: %v", res.Queues)
			}
			break
		}
		if _, err := e.admin().JobCancel(e.ctx, s.ID); err != nil {
			e.t.Fatal(err)
		}
	}
	time.Sleep(time.Until(soon.RunAt) + 100*time.Millisecond)
	// Due before since: a bounded pass leaves it.
	if res, err := e.d.JobPromoteScheduled(e.ctx, 100, time.Now().Add(-50*time.Millisecond)); err != nil || len(res.Queues) != 0 {
		e.t.Fatalf("promote since after run_at: %v, %v", res.Queues, err)
	}
	res, err := e.d.JobPromoteScheduled(e.ctx, 100, time.Now().Add(-time.Minute))
	if err != nil || !slices.Equal(res.Queues, []string{"q1"}) || !near(res.Now, time.Now(), time.Minute) {
		e.t.Fatalf("promote: %v at %v, %v, want [q1]", res.Queues, res.Now, err)
	}
	e.wantState(s.ID, driver.StatePending)
	e.wantState(l.ID, driver.StateScheduled)
})
