package server_test

import (
	"testing"

	"github.com/skiplock/skiplock"
)

// A NUL in a bulk filter's kind, queue or tenant (text no job has and
// PostgreSQL refuses to compare) is bad input naming the field, as in
// every other request, not the database's failure; nothing is acted on.
func TestJobsBulkFilterNUL(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		res, err := b.client.Insert(t.Context(), skiplock.RawArgs{KindName: "x"}, &skiplock.InsertOpts{Tenant: "a"})
		if err != nil {
			t.Fatal(err)
		}
		for body, field := range map[string]string{
			`{"action":"cancel","filter":{"kind":["x","a\u0000b"]}}`:                  "filter.kind[1]",
			`{"action":"cancel","filter":{"kind":["x"],"queue":["\u0000"]}}`:          "filter.queue[0]",
			`{"action":"cancel","filter":{"kind":["x"],"tenant":"a\u0000"}}`:          "filter.tenant",
			`{"action":"pause","filter":{"tenant":"\u0000"},"dry_run":true}`:          "filter.tenant",
			`{"action":"retry","filter":{"queue":["default","q\u0000"]}}`:             "filter.queue[1]",
			`{"action":"delete","filter":{"kind":["\u0000"],"older_than_seconds":1}}`: "filter.kind[0]",
		} {
			a := must(t, b.do(t, "POST", "/v1/jobs/bulk", admin, body), 400)
			if code, got := a.errCode(); code != "invalid_argument" || got != field {
				t.Errorf("%s: %s, want invalid_argument naming %s", body, a.raw, field)
			}
		}
		j, err := b.client.JobGet(t.Context(), res.Job.ID)
		if err != nil || j.State != skiplock.StatePending {
			t.Fatalf("refused bulk actions changed the job: %+v, %v", j, err)
		}
	})
}
