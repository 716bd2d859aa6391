package drivertest

import (
	"time"

	"github.com/skiplock/skiplock/driver"
)

// A worker that names its jobs' queues (HeldJob.Queue, HeartbeatParams.
// Queues) heartbeats, reports and completes jobs of several queues in one
// batch, and one that does not name them reaches the same jobs.
var _ = add("HeldJobsNamedByQueue", func(e *env) {
	var jobs []*driver.Job
	for _, q := range []string{"hq.a", "hq.b", "hq.a"} {
		p := job("hq")
		p.Queue = q
		jobs = append(jobs, e.claimID(e.insert(p), "w1", time.Minute))
	}
	hp := driver.HeartbeatParams{WorkerID: "w1"}
	for _, j := range jobs {
		hp.IDs, hp.Attempts = append(hp.IDs, j.ID), append(hp.Attempts, j.Attempt)
		hp.Leases, hp.Queues = append(hp.Leases, time.Hour), append(hp.Queues, j.Queue)
	}
	res, err := e.d.JobHeartbeat(e.ctx, hp)
	if err != nil || len(res) != 3 {
		e.t.Fatalf("heartbeat naming queues: %+v, %v; want 3 jobs", res, err)
	}
	hp.Queues = nil
	if res, err := e.d.JobHeartbeat(e.ctx, hp); err != nil || len(res) != 3 {
		e.t.Fatalf("heartbeat without queues: %+v, %v; want 3 jobs", res, err)
	}
	pct := 50
	if _, err := e.d.JobProgress(e.ctx, driver.ProgressParams{HeldJob: held(jobs[1]), Progress: &pct}); err != nil {
		e.t.Fatalf("progress naming the queue: %v", err)
	}
	done, err := e.d.JobCompleteMany(e.ctx, []driver.CompleteParams{{HeldJob: held(jobs[0])}, {HeldJob: held(jobs[1])}})
	if err != nil || len(done) != 2 {
		e.t.Fatalf("complete naming queues: %+v, %v; want 2 jobs", done, err)
	}
	unnamed := held(jobs[2])
	unnamed.Queue = ""
	done, err = e.d.JobCompleteMany(e.ctx, []driver.CompleteParams{{HeldJob: unnamed}})
	if err != nil || len(done) != 1 || done[0].Queue != "hq.a" {
		e.t.Fatalf("complete without the queue: %+v, %v; want job %d", done, err, jobs[2].ID)
	}
	for _, j := range jobs {
		if got := e.get(j.ID); got.State != driver.StateCompleted {
			e.t.Fatalf("job %d in %s is %s, want completed", j.ID, j.Queue, got.State)
		}
	}
})
