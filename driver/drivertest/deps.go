package drivertest

import (
	"fmt"

	"github.com/skiplock/skiplock/driver"
)

func dependent(parents ...int64) *driver.InsertParams {
	p := job("child")
	p.DependsOn = parents
	return p
}

// wantCancelledBy checks that a job was cancelled because parent ended in
// state.
func (e *env) wantCancelledBy(id, parent int64, state driver.JobState) {
	e.t.Helper()
	j := e.wantState(id, driver.StateCancelled)
	want := fmt.Sprintf("parent job %d %s", parent, state)
	if len(j.Errors) != 1 || j.Errors[0].Message != want || j.Errors[0].Type != "dependency" {
		e.t.Fatalf("job %d errors %+v, want one saying %q", id, j.Errors, want)
	}
}

var _ = add("DependenciesFanOutFanIn", func(e *env) {
	a, b := e.insert(job("a")), e.insert(job("b"))
	c1, c2 := e.insert(dependent(a.ID)), e.insert(dependent(a.ID))
	join := e.insert(dependent(a.ID, b.ID))
	for _, id := range []int64{c1.ID, c2.ID, join.ID} {
		e.wantState(id, driver.StateWaiting)
	}
	ja := e.claim(driver.ClaimParams{Kinds: []string{"a"}})
	e.wantIDs(ja, a.ID)
	e.complete(ja[0], "")
	e.wantState(c1.ID, driver.StatePending)
	e.wantState(c2.ID, driver.StatePending)
	e.wantState(join.ID, driver.StateWaiting)
	jb := e.claim(driver.ClaimParams{Kinds: []string{"b"}})
	e.complete(jb[0], "")
	e.wantState(join.ID, driver.StatePending)
	if j := e.insert(dependent(a.ID)); e.get(j.ID).State != driver.StatePending {
		e.t.Fatalf("job on a completed parent: %s, want pending", e.get(j.ID).State)
	}
})

var _ = add("DependenciesFailureCancelsTree", func(e *env) {
	p := e.insert(job("a"))
	child := e.insert(dependent(p.ID))
	grandchild := e.insert(dependent(child.ID))
	runs := dependent(p.ID)
	runs.RunOnParentFailure = true
	survivor := e.insert(runs)
	e.failFinal(e.claimID(p, "w1", lease), "fatal")
	e.wantCancelledBy(child.ID, p.ID, driver.StateFailed)
	e.wantCancelledBy(grandchild.ID, child.ID, driver.StateCancelled)
	e.wantState(survivor.ID, driver.StatePending)
	late := e.insert(dependent(p.ID))
	e.wantCancelledBy(late.ID, p.ID, driver.StateFailed)
})

var _ = add("DependenciesCancelledParent", func(e *env) {
	p := e.insert(job("a"))
	child := e.insert(dependent(p.ID))
	if _, err := e.admin().JobCancel(e.ctx, p.ID); err != nil {
		e.t.Fatal(err)
	}
	e.wantCancelledBy(child.ID, p.ID, driver.StateCancelled)
})

var _ = add("DependenciesMissingParent", func(e *env) {
	_, err := e.d.JobInsertMany(e.ctx, []*driver.InsertParams{job("a"), dependent(1 << 40)})
	e.wantErr(err, driver.ErrMissingDependency, "insert with a missing parent")
	jobs, err := e.admin().JobList(e.ctx, driver.ListParams{})
	if err != nil || len(jobs) != 0 {
		e.t.Fatalf("a failed insert stored %d jobs (%v)", len(jobs), err)
	}
})

// A dependent cancelled before its parents finished, then retried, waits for
// them again: it does not run before a parent it depends on.
var _ = add("RetriedDependentWaitsForItsParents", func(e *env) {
	a, b := e.insert(job("a")), e.insert(job("b"))
	child := e.insert(dependent(a.ID, b.ID))
	ja := e.claim(driver.ClaimParams{Kinds: []string{"a"}})
	e.complete(ja[0], "")
	if _, err := e.admin().JobCancel(e.ctx, child.ID); err != nil {
		e.t.Fatal(err)
	}
	out, err := e.admin().JobRetry(e.ctx, child.ID)
	if err != nil || out.State != driver.StateWaiting {
		e.t.Fatalf("retry a dependent whose parent %d is pending: %+v, %v, want waiting", b.ID, out, err)
	}
	if got := e.claim(driver.ClaimParams{Kinds: []string{"child"}}); len(got) != 0 {
		e.t.Fatalf("claimed a retried dependent before its parent finished: %d jobs", len(got))
	}
	jb := e.claim(driver.ClaimParams{Kinds: []string{"b"}})
	e.complete(jb[0], "")
	e.wantState(child.ID, driver.StatePending)
	// With every parent finished, a retry goes straight to pending.
	if _, err := e.admin().JobCancel(e.ctx, child.ID); err != nil {
		e.t.Fatal(err)
	}
	if out, err := e.admin().JobRetry(e.ctx, child.ID); err != nil || out.State != driver.StatePending {
		e.t.Fatalf("retry a dependent whose parents completed: %+v, %v, want pending", out, err)
	}
})
