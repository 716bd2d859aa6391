package drivertest

import (
	"fmt"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// tenantJobs inserts n jobs of kind k for tenant, oldest first, at
// priority prio.
func (e *env) tenantJobs(tenant, k string, n, prio int) []*driver.Job {
	ps := make([]*driver.InsertParams, n)
	now := time.Now()
	for i := range ps {
		ps[i] = job(k)
		ps[i].Tenant, ps[i].Priority = tenant, prio
		ps[i].RunAt = now.Add(time.Duration(i-n) * time.Millisecond)
	}
	var out []*driver.Job
	for _, r := range e.insertMany(ps...) {
		out = append(out, r.Job)
	}
	return out
}

// byTenant counts claimed jobs by tenant.
func byTenant(jobs []*driver.Job) map[string]int {
	m := map[string]int{}
	for _, j := range jobs {
		m[j.Tenant]++
	}
	return m
}

func fair(tenantsWeights ...any) *driver.FairShare {
	f := &driver.FairShare{Tenants: []string{}, Weights: []int{}}
	for i := 0; i < len(tenantsWeights); i += 2 {
		f.Tenants = append(f.Tenants, tenantsWeights[i].(string))
		f.Weights = append(f.Weights, tenantsWeights[i+1].(int))
	}
	return f
}

var _ = add("FairClaimSharesTenants", func(e *env) {
	e.tenantJobs("a", "k", 100, 5)
	e.tenantJobs("b", "k", 10, 5) // after a's: a plain claim takes a's first
	got := e.claim(driver.ClaimParams{Max: 20, Fair: fair()})
	if n := byTenant(got); n["a"] != 10 || n["b"] != 10 {
		e.t.Fatalf("claim of 20 with two tenants: %v", n)
	}
	for _, j := range got {
		if j.State != driver.StateRunning || j.Attempt != 1 || j.WorkerID != "w1" || j.LeaseUntil == nil {
			e.t.Fatalf("claimed job %d: state %s attempt %d worker %q", j.ID, j.State, j.Attempt, j.WorkerID)
		}
	}
	if g := e.claim(driver.ClaimParams{Max: 5, Fair: fair()}); len(g) != 5 || byTenant(g)["a"] != 5 {
		e.t.Fatalf("b had no job left, claimed %v", byTenant(g))
	}
})

var _ = add("FairClaimFillsFromTenantsWithMore", func(e *env) {
	e.tenantJobs("a", "k", 100, 5)
	e.tenantJobs("b", "k", 3, 5)
	e.tenantJobs("c", "other", 50, 5) // not of the claim's kinds
	got := e.claim(driver.ClaimParams{Max: 20, Fair: fair(), Kinds: []string{"k"}})
	if n := byTenant(got); len(got) != 20 || n["b"] != 3 || n["a"] != 17 {
		e.t.Fatalf("claim of 20, b with 3 jobs, c with none of the kinds: %v", n)
	}
	if got := e.claim(driver.ClaimParams{Max: 1000, Fair: fair()}); len(got) != 83+50 {
		e.t.Fatalf("claimed %d of the 133 left", len(got))
	}
})

var _ = add("FairClaimWeights", func(e *env) {
	e.tenantJobs("a", "k", 200, 5)
	e.tenantJobs("b", "k", 200, 5)
	got := e.claim(driver.ClaimParams{Max: 40, Fair: fair("a", 3)})
	if n := byTenant(got); n["a"] != 30 || n["b"] != 10 {
		e.t.Fatalf("claim of 40 at weights 3:1: %v", n)
	}
	// Small claims split about as the weights do.
	n := map[string]int{}
	for range 20 {
		for t, c := range byTenant(e.claim(driver.ClaimParams{Max: 4, Fair: fair("a", 3)})) {
			n[t] += c
		}
	}
	if n["a"]+n["b"] != 80 || n["a"] < 50 || n["a"] > 70 {
		e.t.Fatalf("20 claims of 4 at weights 3:1: %v", n)
	}
})

var _ = add("FairClaimKeepsPriorityInsideTenant", func(e *env) {
	// a has urgent jobs; they do not starve b, and each tenant's jobs come
	// in its own claim order.
	low := e.tenantJobs("a", "k", 5, 1)
	high := e.tenantJobs("a", "k", 5, 10)
	bs := e.tenantJobs("b", "k", 10, 5)
	order := ids(e.claim(driver.ClaimParams{Max: 2, Fair: fair()}))
	if !slices.Contains(order, high[0].ID) || !slices.Contains(order, bs[0].ID) {
		e.t.Fatalf("a claim of 2 took %v, want a's first urgent job %d and b's first %d", order, high[0].ID, bs[0].ID)
	}
	for range 18 {
		got := e.claim(driver.ClaimParams{Max: 1, Fair: fair()})
		if len(got) != 1 {
			e.t.Fatalf("claim of 1 answered %d jobs", len(got))
		}
		order = append(order, got[0].ID)
	}
	var aOrder, bOrder []int64
	for _, id := range order {
		if slices.ContainsFunc(bs, func(j *driver.Job) bool { return j.ID == id }) {
			bOrder = append(bOrder, id)
		} else {
			aOrder = append(aOrder, id)
		}
	}
	want := append(ids(high), ids(low)...)
	if fmt.Sprint(aOrder) != fmt.Sprint(want) || fmt.Sprint(bOrder) != fmt.Sprint(ids(bs)) {
		e.t.Fatalf("a claimed %v, want %v; b claimed %v, want %v", aOrder, want, bOrder, ids(bs))
	}
})

var _ = add("FairClaimSkipsPausedQueues", func(e *env) {
	e.tenantJobs("a", "k", 3, 5)
	if err := e.admin().QueuePause(e.ctx, "default"); err != nil {
		e.t.Fatal(err)
	}
	if got := e.claim(driver.ClaimParams{Fair: fair()}); len(got) != 0 {
		e.t.Fatalf("claimed %v from a paused queue", ids(got))
	}
	if err := e.admin().QueueResume(e.ctx, "default"); err != nil {
		e.t.Fatal(err)
	}
	other := "other"
	if got := e.claim(driver.ClaimParams{Fair: fair(), Tenant: &other}); len(got) != 0 {
		e.t.Fatalf("a claim scoped to another tenant claimed %v", ids(got))
	}
	if got := e.claim(driver.ClaimParams{Fair: fair(), Queue: "q2"}); len(got) != 0 {
		e.t.Fatalf("claimed %v from another queue", ids(got))
	}
	if got := e.claim(driver.ClaimParams{Fair: fair()}); len(got) != 3 {
		e.t.Fatalf("claimed %d of 3", len(got))
	}
})
