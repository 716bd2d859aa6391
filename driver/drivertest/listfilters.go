package drivertest

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

var _ = add("ListFilters", func(e *env) {
	mk := func(tags []string, meta string) *driver.Job {
		p := job("a")
		p.Tags, p.Metadata = tags, json.RawMessage(meta)
		return e.insert(p)
	}
	j1 := mk([]string{"x", "y"}, `{"customer": "acme", "n": 5}`)
	j2 := mk([]string{"x"}, `{"customer": "beta", "n": "5", "deep": {"k": [1, 2]}}`)
	j3 := mk([]string{"y"}, `{"customer": "acme"}`)
	e.complete(e.claimID(j1, "w1", lease), "")
	e.failFinal(e.claimID(j2, "w2", lease), "boom")
	all := []*driver.Job{e.get(j3.ID), e.get(j2.ID), e.get(j1.ID)}
	list := func(p driver.ListParams) []int64 {
		e.t.Helper()
		got, err := e.admin().JobList(e.ctx, p)
		if err != nil {
			e.t.Fatalf("JobList(%+v): %v", p, err)
		}
		return ids(got)
	}
	where := func(keep func(j *driver.Job) bool) []int64 {
		var out []int64
		for _, j := range all {
			if keep(j) {
				out = append(out, j.ID)
			}
		}
		return out
	}
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	for _, c := range []struct {
		name string
		p    driver.ListParams
		want []int64
	}{
		{"one tag", driver.ListParams{Tags: []string{"x"}}, []int64{j2.ID, j1.ID}},
		{"every tag", driver.ListParams{Tags: []string{"x", "y"}}, []int64{j1.ID}},
		{"unknown tag", driver.ListParams{Tags: []string{"z"}}, nil},
		{"metadata string", driver.ListParams{Metadata: map[string]any{"customer": "acme"}}, []int64{j3.ID, j1.ID}},
		{"metadata number", driver.ListParams{Metadata: map[string]any{"n": 5}}, []int64{j1.ID}},
		{"metadata text of a number", driver.ListParams{Metadata: map[string]any{"n": "5"}}, []int64{j2.ID}},
		{"metadata object", driver.ListParams{Metadata: map[string]any{"deep": map[string]any{"k": []int{1, 2}}}}, []int64{j2.ID}},
		{"metadata two keys", driver.ListParams{Metadata: map[string]any{"customer": "acme", "n": 5}}, []int64{j1.ID}},
		{"metadata missing key", driver.ListParams{Metadata: map[string]any{"nope": "acme"}}, nil},
		{"worker", driver.ListParams{WorkerID: "w1"}, []int64{j1.ID}},
		{"error type", driver.ListParams{ErrorType: "test"}, []int64{j2.ID}},
		{"unknown error type", driver.ListParams{ErrorType: "other"}, nil},
		{"finished since", driver.ListParams{FinishedAfter: past}, []int64{j2.ID, j1.ID}},
		{"finished before", driver.ListParams{FinishedBefore: past}, nil},
		{"finished window", driver.ListParams{FinishedAfter: past, FinishedBefore: future}, []int64{j2.ID, j1.ID}},
		{"created before", driver.ListParams{CreatedBefore: future}, []int64{j3.ID, j2.ID, j1.ID}},
		{"created after", driver.ListParams{CreatedAfter: future}, nil},
		{"created from j3", driver.ListParams{CreatedAfter: all[0].CreatedAt},
			where(func(j *driver.Job) bool { return !j.CreatedAt.Before(all[0].CreatedAt) })},
		{"created before j3", driver.ListParams{CreatedBefore: all[0].CreatedAt},
			where(func(j *driver.Job) bool { return j.CreatedAt.Before(all[0].CreatedAt) })},
		{"tag and state", driver.ListParams{Tags: []string{"y"}, States: []driver.JobState{driver.StatePending}}, []int64{j3.ID}},
		{"tag and cursor", driver.ListParams{Tags: []string{"y"}, BeforeID: j3.ID}, []int64{j1.ID}},
	} {
		if got := list(c.p); !slices.Equal(got, c.want) {
			e.t.Fatalf("%s: JobList(%+v): %v, want %v", c.name, c.p, got, c.want)
		}
	}
})

var _ = add("ListByIdempotencyKey", func(e *env) {
	mk := func(tenant, key string) *driver.Job {
		p := job("a")
		p.Tenant, p.IdempotencyKey, p.UniquePolicy = tenant, key, "active"
		return e.insert(p)
	}
	// The same key in two tenants, and again once the first job finished.
	old := mk("", "order-7")
	e.complete(e.claimID(old, "w1", lease), "")
	live := mk("", "order-7")
	other := mk("acme", "order-7")
	mk("", "order-8")
	e.insert(job("a"))
	acme, none := "acme", ""
	for _, c := range []struct {
		name string
		p    driver.ListParams
		want []int64
	}{
		{"every tenant", driver.ListParams{IdempotencyKey: "order-7"}, []int64{other.ID, live.ID, old.ID}},
		{"one tenant", driver.ListParams{IdempotencyKey: "order-7", Tenant: &acme}, []int64{other.ID}},
		{"no tenant", driver.ListParams{IdempotencyKey: "order-7", Tenant: &none}, []int64{live.ID, old.ID}},
		{"finished only", driver.ListParams{IdempotencyKey: "order-7", States: []driver.JobState{driver.StateCompleted}}, []int64{old.ID}},
		{"with cursor", driver.ListParams{IdempotencyKey: "order-7", BeforeID: live.ID}, []int64{old.ID}},
		{"with time bound", driver.ListParams{IdempotencyKey: "order-7", CreatedBefore: time.Now().Add(time.Hour)}, []int64{other.ID, live.ID, old.ID}},
		{"unknown key", driver.ListParams{IdempotencyKey: "order-9"}, nil},
		{"key of another tenant", driver.ListParams{IdempotencyKey: "order-8", Tenant: &acme}, nil},
	} {
		got, err := e.admin().JobList(e.ctx, c.p)
		if err != nil {
			e.t.Fatalf("%s: JobList(%+v): %v", c.name, c.p, err)
		}
		if !slices.Equal(ids(got), c.want) {
			e.t.Fatalf("%s: JobList(%+v): %v, want %v", c.name, c.p, ids(got), c.want)
		}
	}
})
