package drivertest

import (
	"encoding/json"
	"time"

	"github.com/skiplock/skiplock/driver"
)

var _ = add("PauseRunningKeepsCheckpointAndAttempt", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	if _, err := e.d.JobProgress(e.ctx, driver.ProgressParams{HeldJob: held(j), Checkpoint: json.RawMessage(`{"page":7}`)}); err != nil {
		e.t.Fatal(err)
	}
	got, err := e.stops().JobRequestPause(e.ctx, j.ID)
	if err != nil || got.State != driver.StateRunning {
		e.t.Fatalf("request pause: %+v, %v; want running", got, err)
	}
	hb, err := e.d.JobHeartbeat(e.ctx, driver.HeartbeatParams{WorkerID: "w1", IDs: []int64{j.ID},
		Attempts: []int{j.Attempt}, Leases: []time.Duration{lease}})
	if err != nil || len(hb) != 1 || !hb[0].PauseRequested || hb[0].CancelRequested {
		e.t.Fatalf("heartbeat: %+v, %v; want pause requested", hb, err)
	}
	pr, err := e.d.JobProgress(e.ctx, driver.ProgressParams{HeldJob: held(j)})
	if err != nil || !pr.PauseRequested {
		e.t.Fatalf("progress: %+v, %v; want pause requested", pr, err)
	}
	reqs, err := e.stops().JobStopRequests(e.ctx, []int64{j.ID, j.ID + 1000})
	if err != nil || len(reqs) != 1 || reqs[0] != (driver.StopRequest{ID: j.ID, Pause: true}) {
		e.t.Fatalf("stop requests: %+v, %v", reqs, err)
	}
	stale := held(j)
	stale.Attempt++
	_, err = e.stops().JobPauseHeld(e.ctx, stale)
	e.wantErr(err, driver.ErrLeaseLost, "pause another attempt")
	paused, err := e.stops().JobPauseHeld(e.ctx, held(j))
	if err != nil || paused.State != driver.StatePaused || paused.Attempt != 0 || paused.WorkerID != "" ||
		paused.LeaseUntil != nil || !jsonEqual(paused.Checkpoint, []byte(`{"page":7}`)) {
		e.t.Fatalf("paused: %+v, %v", paused, err)
	}
	if reqs, _ := e.stops().JobStopRequests(e.ctx, []int64{j.ID}); len(reqs) != 0 {
		e.t.Fatalf("a paused job still has requests: %+v", reqs)
	}
	if _, err := e.admin().JobResume(e.ctx, j.ID); err != nil {
		e.t.Fatal(err)
	}
	again := e.claimID(j, "w2", lease)
	if again.Attempt != 1 || !jsonEqual(again.Checkpoint, []byte(`{"page":7}`)) {
		e.t.Fatalf("resumed and claimed: attempt %d checkpoint %s", again.Attempt, again.Checkpoint)
	}
	hb, err = e.d.JobHeartbeat(e.ctx, driver.HeartbeatParams{WorkerID: "w2", IDs: []int64{j.ID},
		Attempts: []int{1}, Leases: []time.Duration{lease}})
	if err != nil || len(hb) != 1 || hb[0].PauseRequested {
		e.t.Fatalf("heartbeat after resume: %+v, %v; the request is spent", hb, err)
	}
})

var _ = add("PauseRunningCancelWins", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	if _, err := e.stops().JobRequestPause(e.ctx, j.ID); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.admin().JobCancel(e.ctx, j.ID); err != nil {
		e.t.Fatal(err)
	}
	_, err := e.stops().JobPauseHeld(e.ctx, held(j))
	e.wantErr(err, driver.ErrLeaseLost, "pause a job asked to cancel")
	_, err = e.stops().JobRequestPause(e.ctx, j.ID)
	e.wantErr(err, driver.ErrNotFound, "request pause of a job asked to cancel")
	if _, err := e.stops().JobRequestPause(e.ctx, e.insert(job("a")).ID); err == nil {
		e.t.Fatal("request pause of a pending job: no error")
	}
})

// rescueAskedToPause claims jobs (the first asked to pause) on a lease of a
// second, lets the leases run out and runs the rescuer.
func (e *env) rescueAskedToPause(jobs ...*driver.Job) (driver.RescueResult, error) {
	e.t.Helper()
	if got := e.claim(driver.ClaimParams{DefaultLease: time.Second}); len(got) != len(jobs) {
		e.t.Fatalf("claimed %v", ids(got))
	}
	if _, err := e.stops().JobRequestPause(e.ctx, jobs[0].ID); err != nil {
		e.t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // the leases run out
	return e.d.JobRescue(e.ctx, 100, time.Time{})
}

var _ = add("RescuePausesJobsAskedToPause", func(e *env) {
	asked := e.insert(job("a"))
	plain := e.insert(job("a"))
	res, err := e.rescueAskedToPause(asked, plain)
	if err != nil || res.Paused != 1 || res.Requeued != 1 {
		e.t.Fatalf("rescue: %+v, %v; want one paused, one requeued", res, err)
	}
	// The attempt is spent, as for any expired lease: its worker may still
	// be running it.
	j := e.wantState(asked.ID, driver.StatePaused)
	if j.Attempt != 1 || len(j.Errors) != 1 || j.Errors[0].Type != "lease_expired" || !j.Errors[0].Retryable {
		e.t.Fatalf("paused by the rescuer: attempt %d errors %+v, want attempt 1 and one retryable lease_expired", j.Attempt, j.Errors)
	}
	e.wantState(plain.ID, driver.StatePending)
	// Resumed and claimed again by the same worker, the job runs attempt 2:
	// a late report of attempt 1 is refused.
	if _, err := e.admin().JobResume(e.ctx, asked.ID); err != nil {
		e.t.Fatal(err)
	}
	again := e.claim(driver.ClaimParams{})
	if len(again) != 2 {
		e.t.Fatalf("claimed %v after resume, want both jobs", ids(again))
	}
	for _, r := range again {
		if r.ID == asked.ID && r.Attempt != 2 {
			e.t.Fatalf("resumed job claimed as attempt %d, want 2", r.Attempt)
		}
	}
	_, err = e.d.JobComplete(e.ctx, driver.CompleteParams{HeldJob: driver.HeldJob{ID: asked.ID, Attempt: 1, WorkerID: "w1"}})
	e.wantErr(err, driver.ErrLeaseLost, "complete the resumed job with the attempt its lease lost")
})

// A job asked to pause whose lease runs out on its last attempt fails, as
// any job whose last lease runs out: the attempt is spent and none is left.
var _ = add("RescueFailsAPauseWithNoAttemptLeft", func(e *env) {
	last := job("a")
	last.MaxRetries = 0
	j := e.insert(last)
	res, err := e.rescueAskedToPause(j)
	if err != nil || res.Paused != 0 || res.Failed != 1 {
		e.t.Fatalf("rescue: %+v, %v; want one failed, none paused", res, err)
	}
	got := e.wantState(j.ID, driver.StateFailed)
	if len(got.Errors) != 1 || got.Errors[0].Type != "lease_expired" || got.Errors[0].Retryable {
		e.t.Fatalf("errors %+v, want one lease_expired, not retryable", got.Errors)
	}
})
