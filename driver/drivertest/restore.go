package drivertest

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// vaulted answers a copy of finished job j under another id, as the vault
// would hand it back after retention deleted it.
func vaulted(j *driver.Job, id int64) *driver.Job {
	c := *j
	c.ID = id
	return &c
}

func (e *env) restore(jobs []*driver.Job, into driver.RestoreTarget) []int64 {
	e.t.Helper()
	got, err := e.archive().JobRestore(e.ctx, jobs, into)
	if err != nil {
		e.t.Fatalf("JobRestore into the %s: %v", into, err)
	}
	return got
}

// RestoreQueue: a job restored into the queue is pending with its id, its
// attempt counting on, its error history kept and its retry budget back,
// and is claimable; a new job's id comes after it.
var _ = add("RestoreQueue", func(e *env) {
	j := e.insert(job("restore"))
	failed := e.failFinal(e.claimID(j, "w", lease), "boom")
	back := vaulted(failed, j.ID+1000)
	if got := e.restore([]*driver.Job{back}, driver.RestoreQueue); !slices.Equal(got, []int64{back.ID}) {
		e.t.Fatalf("restored %v, want [%d]", got, back.ID)
	}
	r := e.wantState(back.ID, driver.StatePending)
	if r.Attempt != failed.Attempt || r.MaxRetries != failed.MaxRetries+failed.Attempt || r.AttemptBase != failed.Attempt {
		e.t.Fatalf("restored attempt %d, max_retries %d, attempt_base %d; want %d, %d, %d", r.Attempt, r.MaxRetries,
			r.AttemptBase, failed.Attempt, failed.MaxRetries+failed.Attempt, failed.Attempt)
	}
	if len(r.Errors) != len(failed.Errors) || r.FinishedAt != nil || !jsonEqual(r.Payload, failed.Payload) {
		e.t.Fatalf("restored errors %v, finished_at %v; want the errors %v kept, unfinished", r.Errors, r.FinishedAt, failed.Errors)
	}
	if c := e.claimID(r, "w2", lease); c.Attempt != failed.Attempt+1 {
		e.t.Fatalf("claimed the restored job at attempt %d, want %d", c.Attempt, failed.Attempt+1)
	}
	if n := e.insert(job("restore")); n.ID <= back.ID {
		e.t.Fatalf("a job inserted after the restore has id %d, not above the restored %d", n.ID, back.ID)
	}
})

// RestoreArchive: a job restored into the archive reads as it was stored,
// and new jobs' ids come after it.
var _ = add("RestoreArchive", func(e *env) {
	j := e.insert(job("restore"))
	e.complete(e.claimID(j, "w", lease), `{"ok":true}`)
	done := e.wantState(j.ID, driver.StateCompleted)
	back := vaulted(done, j.ID+2000)
	if got := e.restore([]*driver.Job{back}, driver.RestoreArchive); !slices.Equal(got, []int64{back.ID}) {
		e.t.Fatalf("restored %v, want [%d]", got, back.ID)
	}
	r := e.wantState(back.ID, driver.StateCompleted)
	if !r.FinishedAt.Equal(*done.FinishedAt) || !jsonEqual(r.Result, done.Result) || r.Attempt != done.Attempt ||
		!r.CreatedAt.Equal(done.CreatedAt) || r.Kind != done.Kind || r.Queue != done.Queue {
		e.t.Fatalf("restored %+v, want as stored %+v", r, done)
	}
	if n := e.insert(job("restore")); n.ID <= back.ID {
		e.t.Fatalf("a job inserted after the restore has id %d, not above the restored %d", n.ID, back.ID)
	}
})

// RestoreFirstID: a job restored with id 1 into a database that has
// handed out no id yet keeps the next job from taking its id.
var _ = add("RestoreFirstID", func(e *env) {
	at := time.Now().UTC().Truncate(time.Microsecond)
	j := &driver.Job{ID: 1, Kind: "restore", Queue: "default", State: driver.StateFailed, Priority: 5,
		Payload: []byte(`{}`), Metadata: []byte(`{}`), Attempt: 1, RunAt: at, CreatedAt: at, UpdatedAt: at,
		StartedAt: &at, FinishedAt: &at}
	j.FillEmpty()
	if got := e.restore([]*driver.Job{j}, driver.RestoreArchive); !slices.Equal(got, []int64{1}) {
		e.t.Fatalf("restored %v, want [1]", got)
	}
	if n := e.insert(job("restore")); n.ID <= 1 {
		e.t.Fatalf("a job inserted after the restore has id %d, not above the restored 1", n.ID)
	}
})

// RestoreSkipsPresent: a job whose id the database holds, live or
// archived, is skipped whichever the target, and nothing is overwritten;
// the others of the batch are restored.
var _ = add("RestoreSkipsPresent", func(e *env) {
	live := e.insert(job("restore-live"))
	a := e.insert(job("restore"))
	failed := e.failFinal(e.claimID(a, "w", lease), "boom")
	fresh := vaulted(failed, a.ID+3000)
	batch := []*driver.Job{vaulted(failed, live.ID), failed, fresh}
	for _, into := range []driver.RestoreTarget{driver.RestoreArchive, driver.RestoreQueue} {
		got := e.restore(batch, into)
		want := []int64{fresh.ID}
		if into == driver.RestoreQueue {
			want = nil // fresh went to the archive first
		}
		if !slices.Equal(got, want) {
			e.t.Fatalf("into the %s: restored %v, want %v", into, got, want)
		}
	}
	e.wantState(live.ID, driver.StatePending)
	e.wantState(failed.ID, driver.StateFailed)
	e.wantState(fresh.ID, driver.StateFailed)
	if got := e.restore(nil, driver.RestoreQueue); len(got) != 0 {
		e.t.Fatalf("an empty restore answered %v", got)
	}
})

// RestoreQueueWaits: a job restored into the queue while a job it depends
// on is live waits for it, as a retried one does, and is released when it
// completes.
var _ = add("RestoreQueueWaits", func(e *env) {
	parent := e.insert(job("restore-parent"))
	j := e.insert(job("restore"))
	failed := e.failFinal(e.claimID(j, "w", lease), "boom")
	back := vaulted(failed, j.ID+1000)
	back.DependsOn = []int64{parent.ID, j.ID + 5000} // the second is gone
	e.restore([]*driver.Job{back}, driver.RestoreQueue)
	e.wantState(back.ID, driver.StateWaiting)
	e.complete(e.claimID(parent, "w", lease), "")
	e.wantState(back.ID, driver.StatePending)
})
