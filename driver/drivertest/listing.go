package drivertest

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

var _ = add("ListLiveAndArchived", func(e *env) {
	mk := func(kind, queue, tenant, workflow string) *driver.Job {
		p := job(kind)
		p.Queue, p.Tenant, p.WorkflowID = queue, tenant, workflow
		return e.insert(p)
	}
	j1 := mk("a", "default", "", "wf")
	j2 := mk("b", "default", "t1", "")
	j3 := mk("a", "other", "t1", "wf")
	j4 := mk("a", "default", "", "")
	e.complete(e.claimID(j1, "w1", lease), "")
	all := []int64{j4.ID, j3.ID, j2.ID, j1.ID}
	list := func(p driver.ListParams) []int64 {
		e.t.Helper()
		got, err := e.admin().JobList(e.ctx, p)
		if err != nil {
			e.t.Fatalf("JobList(%+v): %v", p, err)
		}
		return ids(got)
	}
	t1, none := "t1", ""
	for _, c := range []struct {
		p    driver.ListParams
		want []int64
	}{
		{driver.ListParams{}, all},
		{driver.ListParams{States: []driver.JobState{driver.StateCompleted}}, []int64{j1.ID}},
		{driver.ListParams{States: []driver.JobState{driver.StatePending}}, []int64{j4.ID, j3.ID, j2.ID}},
		{driver.ListParams{States: []driver.JobState{driver.StatePending, driver.StateCompleted}}, all},
		{driver.ListParams{Kind: "a"}, []int64{j4.ID, j3.ID, j1.ID}},
		{driver.ListParams{Queue: "other"}, []int64{j3.ID}},
		{driver.ListParams{Tenant: &t1}, []int64{j3.ID, j2.ID}},
		{driver.ListParams{Tenant: &none}, []int64{j4.ID, j1.ID}},
		{driver.ListParams{WorkflowID: "wf"}, []int64{j3.ID, j1.ID}},
		{driver.ListParams{Kind: "a", Queue: "default", States: []driver.JobState{driver.StateCompleted}}, []int64{j1.ID}},
		{driver.ListParams{BeforeID: j3.ID}, []int64{j2.ID, j1.ID}},
		{driver.ListParams{Limit: 1}, []int64{j4.ID}},
	} {
		if got := list(c.p); !slices.Equal(got, c.want) {
			e.t.Fatalf("JobList(%+v): %v, want %v", c.p, got, c.want)
		}
	}
	var paged []int64
	cursor := int64(0)
	for {
		page := list(driver.ListParams{Limit: 3, BeforeID: cursor})
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		cursor = page[len(page)-1]
	}
	if !slices.Equal(paged, all) {
		e.t.Fatalf("paging: %v, want %v", paged, all)
	}
})

var _ = add("GetArchivedAndUnknown", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	e.complete(j, `{"n": 1}`)
	got := e.wantState(j.ID, driver.StateCompleted)
	if got.Kind != "a" || got.Attempt != 1 || got.FinishedAt == nil || !jsonEqual(got.Result, []byte(`{"n":1}`)) {
		e.t.Fatalf("archived job: %+v", got)
	}
	_, err := e.d.JobGet(e.ctx, 1<<40)
	e.wantErr(err, driver.ErrNotFound, "get an unknown job")
})

var _ = add("QueueListCounts", func(e *env) {
	old := job("a")
	old.RunAt = time.Now().Add(-3 * time.Second)
	e.insert(old)
	e.insert(job("a"))
	done := e.insert(job("done"))
	media := job("a")
	media.Queue = "media"
	e.insert(media)
	e.complete(e.claimID(done, "w1", lease), "")
	if err := e.admin().QueuePause(e.ctx, "idle"); err != nil {
		e.t.Fatal(err)
	}
	qs, err := e.stats().QueueList(e.ctx, false)
	if err != nil {
		e.t.Fatal(err)
	}
	names := []string{}
	for _, q := range qs {
		names = append(names, q.Name)
	}
	if !slices.Equal(names, []string{"default", "idle", "media"}) {
		e.t.Fatalf("queues %v", names)
	}
	def := qs[0]
	if def.Counts[driver.StatePending] != 2 || def.Counts[driver.StateCompleted] != 0 || def.Paused ||
		def.OldestPendingAge < 2*time.Second || def.OldestPendingAge > time.Minute {
		e.t.Fatalf("default queue: %+v", def)
	}
	if !qs[1].Paused || qs[2].Counts[driver.StatePending] != 1 {
		e.t.Fatalf("idle %+v media %+v", qs[1], qs[2])
	}
	qs, err = e.stats().QueueList(e.ctx, true)
	if err != nil || qs[0].Counts[driver.StateCompleted] != 1 {
		e.t.Fatalf("with archive: %+v, %v", qs, err)
	}
})

var _ = add("StatsAndChangedSince", func(e *env) {
	since := time.Now().Add(-time.Second)
	a := e.insert(job("a"))
	e.insert(job("b"))
	e.insert(job("b"))
	e.complete(e.claimID(a, "w1", lease), "")
	st, err := e.stats().JobStats(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if st.ByStateKind[driver.StatePending]["b"] != 2 || st.ByStateKind[driver.StateCompleted]["a"] != 1 ||
		st.FinishedLastMinute[driver.StateCompleted] != 1 || st.FinishedLastHour[driver.StateCompleted] != 1 {
		e.t.Fatalf("stats %+v", st)
	}
	changed, err := e.stats().JobChangedSince(e.ctx, since, 100)
	if err != nil || len(changed) != 3 {
		e.t.Fatalf("changed since: %d jobs, %v", len(changed), err)
	}
	for i := 1; i < len(changed); i++ {
		if changed[i].UpdatedAt.Before(changed[i-1].UpdatedAt) {
			e.t.Fatalf("changes out of order: %v", ids(changed))
		}
	}
	if last := changed[len(changed)-1]; last.ID != a.ID || last.State != driver.StateCompleted {
		e.t.Fatalf("newest change: job %d %s, want %d completed", last.ID, last.State, a.ID)
	}
	if got, _ := e.stats().JobChangedSince(e.ctx, since, 1); len(got) != 1 {
		e.t.Fatalf("limit 1: %d jobs", len(got))
	}
	latest := changed[len(changed)-1].UpdatedAt
	if got, err := e.stats().JobChangedSince(e.ctx, latest, 100); err != nil || len(got) != 0 {
		e.t.Fatalf("nothing changed after %s: got %v, %v", latest, ids(got), err)
	}
})

var _ = add("QueueExists", func(e *env) {
	live := job("a")
	live.Queue = "live"
	e.insert(live)
	done := job("a")
	done.Queue = "finished"
	e.complete(e.claimID(e.insert(done), "w1", lease), "")
	if err := e.admin().QueuePause(e.ctx, "settings"); err != nil {
		e.t.Fatal(err)
	}
	qs, err := e.stats().QueueList(e.ctx, false)
	if err != nil {
		e.t.Fatal(err)
	}
	listed := false
	for _, q := range qs {
		if q.Name == "finished" {
			listed = true
			if len(q.Counts) != 0 {
				e.t.Fatalf("queue finished still has live jobs: %+v", q)
			}
		}
	}
	if !listed {
		e.t.Fatalf("queue finished, whose job completed, is not listed: %+v", qs)
	}
	for name, want := range map[string]bool{"live": true, "finished": true, "settings": true, "nosuch": false, "": false} {
		if got, err := e.admin().QueueExists(e.ctx, name); err != nil || got != want {
			e.t.Fatalf("QueueExists(%q): %v, %v; want %v", name, got, err, want)
		}
	}
})
