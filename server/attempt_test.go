package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"
)

// reclaimed answers n jobs of queue that worker "w" claimed, lost to the
// rescuer when their one-second leases ran out, and claimed again: each
// is running under attempt 2.
func reclaimed(t *testing.T, b *bundle, queue string, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = id(must(t, b.do(t, "POST", "/v1/jobs", "", fmt.Sprintf(`{"kind":"k","queue":%q}`, queue)), 201).job())
	}
	claim := fmt.Sprintf(`{"worker_id":"w","max":%d,"lease_seconds":1}`, n)
	if got := must(t, b.do(t, "POST", "/v1/queues/"+queue+"/claim", "", claim), 200).jobs(); len(got) != n {
		t.Fatalf("first claim: %v", got)
	}
	for _, jid := range ids {
		testwait.Until(t, 20*time.Second, fmt.Sprintf("job %d rescued", jid), func() bool {
			if _, err := b.drv.JobRescue(context.Background(), 100, time.Time{}); err != nil {
				t.Fatal(err)
			}
			return fencedJob(t, b, jid)["state"] == "pending"
		})
	}
	// A claim starts where the last one ended: the jobs back behind that
	// place come to a later claim.
	claim = fmt.Sprintf(`{"worker_id":"w","max":%d,"lease_seconds":300}`, n)
	got := 0
	testwait.Until(t, 20*time.Second, "the jobs claimed again", func() bool {
		for _, j := range must(t, b.do(t, "POST", "/v1/queues/"+queue+"/claim", "", claim), 200).jobs() {
			if j["attempt"] != 2.0 || j["worker_id"] != "w" {
				t.Fatalf("second claim: %v", j)
			}
			got++
		}
		return got == n
	})
	return ids
}

func fencedJob(t *testing.T, b *bundle, jid int64) map[string]any {
	t.Helper()
	return must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", jid), "", nil), 200).job()
}

// TestReportsAreFencedOnAttempt: a worker that lost a job and claimed it
// again under the same worker_id cannot report on its old attempt; reports
// on the new attempt go through.
func TestReportsAreFencedOnAttempt(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		ids := reclaimed(t, b, "fence", 2)
		stale := map[string]string{
			"heartbeat": `{"worker_id":"w","attempt":1,"progress":90}`,
			"complete":  `{"worker_id":"w","attempt":1,"result":{"stale":true}}`,
			"fail":      `{"worker_id":"w","attempt":1,"error":{"type":"Stale","message":"old attempt"}}`,
		}
		for action, body := range stale {
			a := must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/%s", ids[0], action), "", body), http.StatusConflict)
			if code, _ := a.errCode(); code != "conflict" {
				t.Fatalf("%s of the old attempt: %s", action, a.raw)
			}
		}
		j := fencedJob(t, b, ids[0])
		if j["state"] != "running" || j["attempt"] != 2.0 || j["worker_id"] != "w" || j["progress"] != 0.0 ||
			j["result"] != nil || len(j["errors"].([]any)) != 1 {
			t.Fatalf("stale reports changed the job: %v", j)
		}
		path := fmt.Sprintf("/v1/jobs/%d/", ids[0])
		must(t, b.do(t, "POST", path+"heartbeat", "", `{"worker_id":"w","attempt":2,"progress":50}`), 200)
		if got := fencedJob(t, b, ids[0]); got["progress"] != 50.0 {
			t.Fatalf("heartbeat of the new attempt: %v", got)
		}
		done := must(t, b.do(t, "POST", path+"complete", "", `{"worker_id":"w","attempt":2,"result":{"n":1},"next":[{"kind":"after"}]}`), 200)
		if done.job()["state"] != "completed" || len(maps(done.body["next"])) != 1 {
			t.Fatalf("complete of the new attempt: %s", done.raw)
		}
		// Once completed, even the right attempt is refused.
		must(t, b.do(t, "POST", path+"complete", "", `{"worker_id":"w","attempt":2}`), http.StatusConflict)
		f := must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", ids[1]), "",
			`{"worker_id":"w","attempt":2,"error":{"type":"Bad","message":"no"},"retryable":false}`), 200).job()
		if f["state"] != "failed" || len(f["errors"].([]any)) != 2 {
			t.Fatalf("fail of the new attempt: %v", f)
		}
	})
}

// An attempt that no claim can answer is bad input; an unknown job stays
// not found when the report names an attempt.
func TestReportAttemptInput(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		j := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"k"}`), 201).job()
		must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w"}`), 200)
		for _, action := range []string{"heartbeat", "complete", "fail"} {
			more := ""
			if action == "fail" {
				more = `,"error":{"type":"t","message":"m"}`
			}
			for _, attempt := range []string{"0", "-1", `"1"`, "1.5"} {
				a := must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/%s", id(j), action), "",
					`{"worker_id":"w","attempt":`+attempt+more+`}`), http.StatusBadRequest)
				if _, field := a.errCode(); field != "attempt" {
					t.Errorf("%s with attempt %s: %s", action, attempt, a.raw)
				}
			}
			a := must(t, b.do(t, "POST", "/v1/jobs/999999/"+action, "", `{"worker_id":"w","attempt":1`+more+`}`), http.StatusNotFound)
			if !strings.Contains(string(a.raw), "job 999999: not found") {
				t.Errorf("%s of an unknown job: %s, want it named", action, a.raw)
			}
		}
		if got := fencedJob(t, b, id(j)); got["state"] != "running" || got["attempt"] != 1.0 {
			t.Fatalf("bad reports changed the job: %v", got)
		}
	})
}

// An attempt past what the database holds (int4 on PostgreSQL) is bad
// input naming the field on every report, single or batch, not the
// database's failure: a client that retries 5xx would retry it for ever.
// Nothing is reported and nothing claimed.
func TestReportAttemptBeyondInt4(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		j := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"k"}`), 201).job()
		must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w"}`), 200)
		other := id(must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"k"}`), 201).job())
		ok := fmt.Sprintf(`{"id":%d,"attempt":1}`, id(j))
		for _, attempt := range []string{"2147483648", "4294967297", "9223372036854775807", "-2147483649"} {
			bad := fmt.Sprintf(`{"id":%d,"attempt":%s,"result":{"n":1}}`, id(j), attempt)
			for _, c := range []struct{ path, body, field string }{
				{fmt.Sprintf("/v1/jobs/%d/heartbeat", id(j)), `{"worker_id":"w","progress":50,"attempt":` + attempt + `}`, "attempt"},
				{fmt.Sprintf("/v1/jobs/%d/complete", id(j)), `{"worker_id":"w","result":{"n":1},"attempt":` + attempt + `}`, "attempt"},
				{fmt.Sprintf("/v1/jobs/%d/fail", id(j)), `{"worker_id":"w","error":{"type":"t","message":"m"},"attempt":` + attempt + `}`, "attempt"},
				{"/v1/jobs/complete", `{"worker_id":"w","jobs":[` + bad + `]}`, "jobs[0].attempt"},
				{"/v1/jobs/complete", fmt.Sprintf(`{"worker_id":"w","jobs":[{"id":%d},%s]}`, other, bad), "jobs[1].attempt"},
				{"/v1/queues/default/claim", `{"worker_id":"w","complete":[` + ok + `,` + strings.Replace(bad, fmt.Sprint(id(j)), fmt.Sprint(other), 1) + `]}`, "complete[1].attempt"},
			} {
				a := must(t, b.do(t, "POST", c.path, "", c.body), http.StatusBadRequest)
				if code, field := a.errCode(); code != "invalid_argument" || field != c.field {
					t.Errorf("%s %s: %s, want invalid_argument naming %s", c.path, c.body, a.raw, c.field)
				}
			}
		}
		if got := fencedJob(t, b, id(j)); got["state"] != "running" || got["attempt"] != 1.0 || got["progress"] != 0.0 ||
			got["result"] != nil || len(got["errors"].([]any)) != 0 {
			t.Fatalf("refused reports changed the job: %v", got)
		}
		if got := fencedJob(t, b, other); got["state"] != "pending" {
			t.Fatalf("a claim with a refused report claimed: %v", got)
		}
	})
}
