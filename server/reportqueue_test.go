package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// citusDB is a schema distributed on Citus (SKIPLOCK_TEST_CITUS_URL; the
// test is skipped without it).
var citusDB = database{name: "citus",
	open: func(t *testing.T) driver.Driver { d, _ := pgtest.CitusSchema(t); return d }}

// claimedIn enqueues n jobs into queue and claims them as worker "w",
// each at attempt 1.
func claimedIn(t *testing.T, b *bundle, queue string, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = id(must(t, b.do(t, "POST", "/v1/jobs", "", fmt.Sprintf(`{"kind":"k","queue":%q}`, queue)), 201).job())
	}
	claim := fmt.Sprintf(`{"worker_id":"w","max":%d,"lease_seconds":300}`, n)
	if got := must(t, b.do(t, "POST", "/v1/queues/"+queue+"/claim", "", claim), 200).jobs(); len(got) != n {
		t.Fatalf("claim: %v", got)
	}
	return ids
}

// reportsWithQueue: reports that name the job's queue act as without it,
// single and batched; a queue that is not the job's answers 409 when the
// report has no attempt (the job is read), and leaves the job as it was.
func reportsWithQueue(t *testing.T, b *bundle) {
	ids := claimedIn(t, b, "rq", 6)
	path := func(i int, action string) string { return fmt.Sprintf("/v1/jobs/%d/%s", ids[i], action) }
	must(t, b.do(t, "POST", path(0, "heartbeat"), "", `{"worker_id":"w","attempt":1,"queue":"rq","progress":40}`), 200)
	must(t, b.do(t, "POST", path(0, "complete"), "", `{"worker_id":"w","attempt":1,"queue":"rq","result":1}`), 200)
	must(t, b.do(t, "POST", path(1, "fail"), "", `{"worker_id":"w","attempt":1,"queue":"rq","retryable":false,
		"error":{"type":"x","message":"y"}}`), 200)
	res := must(t, b.do(t, "POST", "/v1/jobs/complete", "", fmt.Sprintf(
		`{"worker_id":"w","jobs":[{"id":%d,"attempt":1,"queue":"rq"}]}`, ids[2])), 200).body["results"]
	if r := maps(res); len(r) != 1 || r[0]["ok"] != true {
		t.Fatalf("batch completion with its queue: %v", res)
	}
	done := must(t, b.do(t, "POST", "/v1/queues/rq/claim", "", fmt.Sprintf(
		`{"worker_id":"w","complete":[{"id":%d,"attempt":1,"queue":"rq"}]}`, ids[3])), 200).body["completed"]
	if r := maps(done); len(r) != 1 || r[0]["ok"] != true {
		t.Fatalf("claim-carried completion with its queue: %v", done)
	}
	for _, action := range []string{"heartbeat", "complete", "fail"} {
		body := `{"worker_id":"w","queue":"elsewhere","error":{"type":"x"}}`
		if action != "fail" {
			body = `{"worker_id":"w","queue":"elsewhere"}`
		}
		a := must(t, b.do(t, "POST", path(4, action), "", body), http.StatusConflict)
		if code, _ := a.errCode(); code != "conflict" {
			t.Fatalf("%s in another queue: %s", action, a.raw)
		}
	}
	res = must(t, b.do(t, "POST", "/v1/jobs/complete", "", fmt.Sprintf(
		`{"worker_id":"w","jobs":[{"id":%d,"queue":"elsewhere"}]}`, ids[4])), 200).body["results"]
	if r := maps(res); len(r) != 1 || r[0]["ok"] != false {
		t.Fatalf("batch completion in another queue: %v", res)
	}
	if j := fencedJob(t, b, ids[4]); j["state"] != "running" || j["progress"] != 0.0 {
		t.Fatalf("reports naming another queue changed the job: %v", j)
	}
	for i, state := range []string{"completed", "failed", "completed", "completed"} {
		if j := fencedJob(t, b, ids[i]); j["state"] != state {
			t.Fatalf("job %d: %v, want %s", i, j, state)
		}
	}
}

func TestReportsWithQueue(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		reportsWithQueue(t, b)
		// A report with its attempt is fenced by its statement, which on
		// plain PostgreSQL and SQLite does not look at the queue.
		ids := claimedIn(t, b, "rq2", 1)
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", ids[0]), "",
			`{"worker_id":"w","attempt":1,"queue":"elsewhere"}`), 200)
	})
}

// TestCitusReportsWithQueue: on Citus a report names its job's shard by the
// queue; one with another queue finds no job held there, attempt or not.
func TestCitusReportsWithQueue(t *testing.T) {
	pgtest.CitusURL(t)
	b := setup(t, citusDB, nil)
	reportsWithQueue(t, b)
	ids := claimedIn(t, b, "rq2", 1)
	for _, action := range []string{"heartbeat", "complete", "fail"} {
		a := must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/%s", ids[0], action), "", reportBody(action)),
			http.StatusConflict)
		if code, _ := a.errCode(); code != "conflict" {
			t.Fatalf("%s with its attempt in another queue: %s", action, a.raw)
		}
	}
	res := must(t, b.do(t, "POST", "/v1/jobs/complete", "", fmt.Sprintf(
		`{"worker_id":"w","jobs":[{"id":%d,"attempt":1,"queue":"elsewhere"}]}`, ids[0])), 200).body["results"]
	if r := maps(res); len(r) != 1 || r[0]["ok"] != false {
		t.Fatalf("batch completion with its attempt in another queue: %v", res)
	}
	if j := fencedJob(t, b, ids[0]); j["state"] != "running" {
		t.Fatalf("reports naming another queue changed the job: %v", j)
	}
}

// reportBody is a report of action with attempt 1 and a queue that is not
// the job's.
func reportBody(action string) string {
	if action == "fail" {
		return `{"worker_id":"w","attempt":1,"queue":"elsewhere","error":{"type":"x"}}`
	}
	return `{"worker_id":"w","attempt":1,"queue":"elsewhere"}`
}

// TestReportQueueBadInput: an empty queue, or one that is not a string,
// answers 400 naming it, and nothing is reported.
func TestReportQueueBadInput(t *testing.T) {
	b := setup(t, databases[1], nil)
	ids := claimedIn(t, b, "bad", 1)
	for _, c := range []struct{ path, body, field string }{
		{fmt.Sprintf("/v1/jobs/%d/heartbeat", ids[0]), `{"worker_id":"w","queue":""}`, "queue"},
		{fmt.Sprintf("/v1/jobs/%d/complete", ids[0]), `{"worker_id":"w","queue":5}`, "queue"},
		{fmt.Sprintf("/v1/jobs/%d/fail", ids[0]), `{"worker_id":"w","queue":"","error":{}}`, "queue"},
		{"/v1/jobs/complete", fmt.Sprintf(`{"worker_id":"w","jobs":[{"id":%d,"queue":""}]}`, ids[0]), "jobs[0].queue"},
		{"/v1/queues/bad/claim", fmt.Sprintf(`{"worker_id":"w","complete":[{"id":%d,"queue":""}]}`, ids[0]), "complete[0].queue"},
	} {
		a := must(t, b.do(t, "POST", c.path, "", c.body), http.StatusBadRequest)
		if code, field := a.errCode(); code != "invalid_argument" || field != c.field {
			t.Errorf("%s %s: %s, want a 400 naming %s", c.path, c.body, a.raw, c.field)
		}
	}
	if j := fencedJob(t, b, ids[0]); j["state"] != "running" {
		t.Fatalf("refused reports changed the job: %v", j)
	}
}
