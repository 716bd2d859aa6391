package drivertest

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// selectIDs pages through the jobs p picks two at a time, as a bulk action
// does, and answers all their ids.
func (e *env) selectIDs(p driver.SelectParams) []int64 {
	e.t.Helper()
	var all []int64
	p.Limit = 2
	for {
		page, err := e.bulk().JobSelect(e.ctx, p)
		if err != nil {
			e.t.Fatalf("JobSelect: %v", err)
		}
		all = append(all, page...)
		if len(page) < p.Limit {
			return all
		}
		p.AfterID = page[len(page)-1]
	}
}

var _ = add("BulkSelectAndDelete", func(e *env) {
	mk := func(kind, queue, tenant string) *driver.Job {
		p := job(kind)
		p.Queue, p.Tenant = queue, tenant
		return e.insert(p)
	}
	a1, b1, a2 := mk("a", "q1", "t1"), mk("b", "q2", "t1"), mk("a", "q2", "t2")
	c := mk("c", "q1", "")
	want := func(p driver.SelectParams, ids ...int64) {
		e.t.Helper()
		if got := e.selectIDs(p); !slices.Equal(got, ids) {
			e.t.Fatalf("select %+v: got %v, want %v", p, got, ids)
		}
	}
	want(driver.SelectParams{}, a1.ID, b1.ID, a2.ID, c.ID)
	want(driver.SelectParams{Kinds: []string{"a"}}, a1.ID, a2.ID)
	want(driver.SelectParams{Kinds: []string{"a", "c"}, Queues: []string{"q1"}}, a1.ID, c.ID)
	t1 := "t1"
	want(driver.SelectParams{Tenant: &t1}, a1.ID, b1.ID)
	want(driver.SelectParams{States: []driver.JobState{driver.StatePending}, Queues: []string{"q2"}}, b1.ID, a2.ID)
	want(driver.SelectParams{Before: time.Now().Add(-time.Hour)})
	want(driver.SelectParams{Before: time.Now().Add(time.Hour), Kinds: []string{"b"}}, b1.ID)
	want(driver.SelectParams{Archived: true})

	// Finish a1 (completed) and c (failed); a2 and b1 stay live.
	e.complete(e.claimID(a1, "w1", lease), "")
	e.failFinal(e.claimID(c, "w1", lease), "boom")
	want(driver.SelectParams{Archived: true}, a1.ID, c.ID)
	want(driver.SelectParams{Archived: true, States: []driver.JobState{driver.StateFailed}}, c.ID)
	want(driver.SelectParams{Archived: true, Before: time.Now().Add(-time.Hour)})
	want(driver.SelectParams{Kinds: []string{"a"}}, a2.ID)

	gone, err := e.bulk().JobDeleteArchived(e.ctx, driver.Chunk{IDs: []int64{a1.ID, b1.ID, c.ID, 1 << 40}})
	if err != nil || !slices.Equal(gone, []int64{a1.ID, c.ID}) {
		e.t.Fatalf("JobDeleteArchived: %v, %v; want [%d %d]", gone, err, a1.ID, c.ID)
	}
	if _, err := e.d.JobGet(e.ctx, a1.ID); err != driver.ErrNotFound {
		e.t.Fatalf("deleted job %d: JobGet answers %v, want ErrNotFound", a1.ID, err)
	}
	e.wantState(b1.ID, driver.StatePending)
	want(driver.SelectParams{Archived: true})
})
