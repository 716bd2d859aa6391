package drivertest

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// int32Max is the last id a 32-bit integer holds: ids, cursors and
// dependencies past it must work as any other.
const int32Max = 1<<31 - 1

// bigIDJobs sets the next id a little below 2³¹ and inserts n jobs (every
// other one in workflow "wf", the last of kind "last"), so that their ids
// cross it; it answers their ids in insertion order.
func (e *env) bigIDJobs(n int) []int64 {
	e.t.Helper()
	e.nextID(int32Max - 9)
	ps := make([]*driver.InsertParams, n)
	for i := range ps {
		ps[i] = job("a")
		if i%2 == 0 {
			ps[i].WorkflowID = "wf"
		}
	}
	ps[n-1].Kind = "last"
	var out []int64
	for _, r := range e.insertMany(ps...) {
		out = append(out, r.Job.ID)
	}
	if out[0] > int32Max || out[n-1] <= int32Max {
		e.t.Fatalf("ids %d to %d do not cross 2³¹", out[0], out[n-1])
	}
	return out
}

// pages lists jobs newest first, limit at a time, each page continuing
// before the last id of the one before (as next_cursor does).
func (e *env) pages(p driver.ListParams) []int64 {
	e.t.Helper()
	var seen []int64
	for range 1000 {
		page, err := e.admin().JobList(e.ctx, p)
		if err != nil {
			e.t.Fatalf("JobList after id %d: %v", p.BeforeID, err)
		}
		if len(page) == 0 {
			return seen
		}
		seen = append(seen, ids(page)...)
		p.BeforeID = page[len(page)-1].ID
	}
	e.t.Fatalf("listing did not end after 1000 pages")
	return nil
}

var _ = add("IDsPast2To31ListInPages", func(e *env) {
	all := e.bigIDJobs(30)
	e.complete(e.claimID(e.get(all[len(all)-1]), "w1", lease), "") // an archived one too
	want := slices.Clone(all)
	slices.Reverse(want)
	if got := e.pages(driver.ListParams{Limit: 4}); !slices.Equal(got, want) {
		e.t.Fatalf("pages: %v, want %v", got, want)
	}
	var wf []int64
	for i, id := range want {
		if (len(all)-1-i)%2 == 0 {
			wf = append(wf, id)
		}
	}
	if got := e.pages(driver.ListParams{Limit: 3, WorkflowID: "wf"}); !slices.Equal(got, wf) {
		e.t.Fatalf("workflow pages: %v, want %v", got, wf)
	}
})

var _ = add("IDsPast2To31Lifecycle", func(e *env) {
	all := e.bigIDJobs(12)
	big := all[len(all)-1]
	e.nextID(big + 1<<32) // and past 2³² too

	// Claim (after a place in claim order), heartbeat, progress, complete.
	lead := e.insert(job("big"))
	after := e.get(all[0]).Key()
	got := e.claim(driver.ClaimParams{Kinds: []string{"big"}, After: &after})
	e.wantIDs(got, lead.ID)
	hb, err := e.d.JobHeartbeat(e.ctx, driver.HeartbeatParams{WorkerID: "w1", IDs: []int64{lead.ID},
		Attempts: []int{1}, Leases: []time.Duration{time.Hour}})
	if err != nil || len(hb) != 1 || hb[0].ID != lead.ID {
		e.t.Fatalf("heartbeat job %d: %+v, %v", lead.ID, hb, err)
	}
	progress := 50
	if _, err := e.d.JobProgress(e.ctx, driver.ProgressParams{HeldJob: held(got[0]), Progress: &progress}); err != nil {
		e.t.Fatalf("progress of job %d: %v", lead.ID, err)
	}

	// A dependent waits for its parent and is released by its completion.
	child := e.insert(dependent(lead.ID, big))
	e.wantState(child.ID, driver.StateWaiting)
	if !slices.Equal(child.DependsOn, []int64{lead.ID, big}) {
		e.t.Fatalf("depends_on %v, want %v", child.DependsOn, []int64{lead.ID, big})
	}
	e.complete(got[0], `{"ok": true}`)
	e.wantState(lead.ID, driver.StateCompleted)
	if _, err := e.admin().JobCancel(e.ctx, big); err != nil {
		e.t.Fatalf("cancel job %d: %v", big, err)
	}
	e.wantCancelledBy(child.ID, big, driver.StateCancelled)

	// Retry, pause, resume, fail for good.
	if _, err := e.admin().JobRetry(e.ctx, big); err != nil {
		e.t.Fatalf("retry job %d: %v", big, err)
	}
	e.wantState(big, driver.StatePending)
	if _, err := e.admin().JobPause(e.ctx, big); err != nil {
		e.t.Fatalf("pause job %d: %v", big, err)
	}
	if _, err := e.admin().JobResume(e.ctx, big); err != nil {
		e.t.Fatalf("resume job %d: %v", big, err)
	}
	e.failFinal(e.claimID(e.get(big), "w2", lease), "fatal")
	e.wantState(big, driver.StateFailed)
	if got := e.pages(driver.ListParams{Limit: 2, BeforeID: lead.ID + 1, States: []driver.JobState{driver.StateFailed}}); !slices.Equal(got, []int64{big}) {
		e.t.Fatalf("failed jobs: %v, want [%d]", got, big)
	}
})
