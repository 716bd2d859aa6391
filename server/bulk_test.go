package server_test

import (
	"testing"

	"github.com/skiplock/skiplock"
)

// TestJobsBulk: POST /v1/jobs/bulk counts with dry_run, then acts; a
// scoped admin token acts on its tenant only; an empty filter, a live
// state for delete and a non-admin token are refused.
func TestJobsBulk(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		aAdmin := createToken(t, b.drv, "admin", "a")
		prod := createToken(t, b.drv, "producer", "")
		ctx := t.Context()
		var ids []int64
		for _, tenant := range []string{"a", "b", "a", "b"} {
			res, err := b.client.Insert(ctx, skiplock.RawArgs{KindName: "x"}, &skiplock.InsertOpts{Tenant: tenant})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Job.ID)
		}
		want := func(a answer, matched, done float64) {
			t.Helper()
			must(t, a, 200)
			if a.body["matched"] != matched || a.body["done"] != done {
				t.Fatalf("answer %s, want matched %v done %v", a.raw, matched, done)
			}
		}
		want(b.do(t, "POST", "/v1/jobs/bulk", admin, `{"action":"cancel","filter":{"kind":["x"]},"dry_run":true}`), 4, 0)
		want(b.do(t, "POST", "/v1/jobs/bulk", aAdmin, `{"action":"cancel","filter":{"kind":["x"],"tenant":"b"}}`), 2, 2)
		for i, id := range ids {
			j, err := b.client.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if wantState := map[bool]skiplock.JobState{true: skiplock.StateCancelled, false: skiplock.StatePending}[i%2 == 0]; j.State != wantState {
				t.Fatalf("job %d of tenant %s: %s, want %s", id, j.Tenant, j.State, wantState)
			}
		}
		want(b.do(t, "POST", "/v1/jobs/bulk", admin, `{"action":"retry","filter":{"state":["cancelled"],"queue":["default"]}}`), 2, 2)
		want(b.do(t, "POST", "/v1/jobs/bulk", admin, `{"action":"delete","filter":{"older_than_seconds":3600}}`), 0, 0)

		refused := func(token, body string, status int, field string) {
			t.Helper()
			a := must(t, b.do(t, "POST", "/v1/jobs/bulk", token, body), status)
			if _, got := a.errCode(); field != "" && got != field {
				t.Fatalf("%s: field %q, want %q: %s", body, got, field, a.raw)
			}
		}
		refused(admin, `{"action":"cancel"}`, 400, "filter")
		refused(aAdmin, `{"action":"cancel","filter":{}}`, 400, "filter")
		refused(admin, `{"action":"cancel","filter":{"older_than_seconds":0}}`, 400, "filter")
		refused(admin, `{"action":"delete","filter":{"state":["pending"]}}`, 400, "filter.state")
		refused(admin, `{"action":"purge","filter":{"kind":["x"]}}`, 400, "action")
		refused(admin, `{"action":"cancel","filter":{"kinds":["x"]}}`, 400, "")
		refused(prod, `{"action":"cancel","filter":{"kind":["x"]}}`, 403, "")
		want(b.do(t, "POST", "/v1/jobs/bulk", admin, `{"action":"cancel","filter":{"kind":["x"]},"dry_run":true}`), 4, 0)
	})
}

// TestJobsBulkPauseResume: POST /v1/jobs/bulk pauses and resumes the live
// jobs a filter picks, a scoped admin token its tenant's only; a state the
// action does not act on and a viewer token are refused.
func TestJobsBulkPauseResume(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		aAdmin := createToken(t, b.drv, "admin", "a")
		viewer := createToken(t, b.drv, "viewer", "")
		ctx := t.Context()
		tenantOf := map[int64]string{}
		for _, tenant := range []string{"a", "b", "a", "b"} {
			res, err := b.client.Insert(ctx, skiplock.RawArgs{KindName: "x"}, &skiplock.InsertOpts{Tenant: tenant, Queue: "q"})
			if err != nil {
				t.Fatal(err)
			}
			tenantOf[res.Job.ID] = tenant
		}
		states := func(want map[string]skiplock.JobState) {
			t.Helper()
			for id, tenant := range tenantOf {
				j, err := b.client.JobGet(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if j.State != want[tenant] {
					t.Fatalf("job %d of tenant %s: %s, want %s", id, tenant, j.State, want[tenant])
				}
			}
		}
		bulk := func(token, body string, matched, done float64) {
			t.Helper()
			a := must(t, b.do(t, "POST", "/v1/jobs/bulk", token, body), 200)
			if a.body["matched"] != matched || a.body["done"] != done {
				t.Fatalf("%s: %s, want matched %v done %v", body, a.raw, matched, done)
			}
		}
		bulk(admin, `{"action":"pause","filter":{"queue":["q"]},"dry_run":true}`, 4, 0)
		bulk(aAdmin, `{"action":"pause","filter":{"queue":["q"],"tenant":"b"}}`, 2, 2)
		states(map[string]skiplock.JobState{"a": skiplock.StatePaused, "b": skiplock.StatePending})
		bulk(admin, `{"action":"pause","filter":{"kind":["x"],"state":["pending"]}}`, 2, 2)
		states(map[string]skiplock.JobState{"a": skiplock.StatePaused, "b": skiplock.StatePaused})
		bulk(aAdmin, `{"action":"resume","filter":{"kind":["x"]}}`, 2, 2)
		states(map[string]skiplock.JobState{"a": skiplock.StatePending, "b": skiplock.StatePaused})
		bulk(admin, `{"action":"resume","filter":{"state":["paused"]}}`, 2, 2)
		states(map[string]skiplock.JobState{"a": skiplock.StatePending, "b": skiplock.StatePending})

		for body, field := range map[string]string{
			`{"action":"pause","filter":{"state":["paused"]}}`:    "filter.state",
			`{"action":"resume","filter":{"state":["pending"]}}`:  "filter.state",
			`{"action":"pause","filter":{"state":["completed"]}}`: "filter.state",
			`{"action":"resume"}`:                                 "filter",
		} {
			a := must(t, b.do(t, "POST", "/v1/jobs/bulk", admin, body), 400)
			if _, got := a.errCode(); got != field {
				t.Fatalf("%s: field %q, want %q: %s", body, got, field, a.raw)
			}
		}
		must(t, b.do(t, "POST", "/v1/jobs/bulk", viewer, `{"action":"pause","filter":{"queue":["q"]}}`), 403)
		states(map[string]skiplock.JobState{"a": skiplock.StatePending, "b": skiplock.StatePending})
	})
}
