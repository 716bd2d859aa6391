package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/server"
)

func TestEnqueueAndRead(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		a := must(t, b.do(t, "POST", "/v1/jobs", "", map[string]any{"kind": "email", "payload": map[string]any{"to": "a@x"},
			"priority": 8, "tags": []string{"t1"}, "metadata": map[string]any{"m": 1}}), http.StatusCreated)
		j := a.job()
		if j["kind"] != "email" || j["state"] != "pending" || j["queue"] != "default" || j["priority"] != 8.0 ||
			j["max_retries"] != 3.0 || j["op"] != nil || j["tenant"] != "" {
			t.Fatalf("job: %v", j)
		}
		// Defaults: an absent payload is {}.
		a = must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"bare"}`), http.StatusCreated)
		if p, _ := a.job()["payload"].(map[string]any); p == nil || len(p) != 0 {
			t.Fatalf("payload of a job without one: %v", a.job()["payload"])
		}
		got := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", id(j)), "", nil), http.StatusOK).job()
		if id(got) != id(j) || got["kind"] != "email" {
			t.Fatalf("get: %v", got)
		}

		// A duplicate under its key answers the live job, 200.
		spec := map[string]any{"kind": "k", "payload": map[string]any{}, "idempotency_key": "key-1"}
		first := must(t, b.do(t, "POST", "/v1/jobs", "", spec), http.StatusCreated).job()
		dup := must(t, b.do(t, "POST", "/v1/jobs", "", spec), http.StatusOK)
		if dup.body["duplicate"] != true || id(dup.job()) != id(first) {
			t.Fatalf("duplicate: %s", dup.raw)
		}

		// Scheduled by delay or run_at.
		if st := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"later","delay_seconds":3600}`), 201).job()["state"]; st != "scheduled" {
			t.Fatalf("delayed job is %v", st)
		}
		if st := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"later","run_at":"2099-01-01T00:00:00Z"}`), 201).job()["state"]; st != "scheduled" {
			t.Fatalf("run_at job is %v", st)
		}
		// depends_on makes a job wait.
		w := must(t, b.do(t, "POST", "/v1/jobs", "", map[string]any{"kind": "child", "depends_on": []int64{id(j)}}), 201).job()
		if w["state"] != "waiting" {
			t.Fatalf("dependent job is %v", w["state"])
		}
	})
}

func TestBatchAllOrNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		jobs := make([]map[string]any, 100)
		for i := range jobs {
			jobs[i] = map[string]any{"kind": "bulk", "payload": map[string]any{"n": i}}
		}
		a := must(t, b.do(t, "POST", "/v1/jobs/batch", "", map[string]any{"jobs": jobs}), http.StatusCreated)
		got := a.jobs()
		if len(got) != 100 {
			t.Fatalf("%d jobs answered", len(got))
		}
		for i, j := range got {
			if p := j["payload"].(map[string]any); p["n"] != float64(i) {
				t.Fatalf("job %d out of order: %v", i, p)
			}
		}
		// One bad job: nothing is stored, and the error names it.
		jobs[57]["priority"] = 11
		a = must(t, b.do(t, "POST", "/v1/jobs/batch", "", map[string]any{"jobs": jobs}), http.StatusBadRequest)
		if code, field := a.errCode(); code != "invalid_argument" || field != "jobs[57].priority" {
			t.Fatalf("error %s %s", code, field)
		}
		list := must(t, b.do(t, "GET", "/v1/jobs?kind=bulk&limit=1000", "", nil), 200).jobs()
		if len(list) != 100 {
			t.Fatalf("after a refused batch there are %d jobs, want 100", len(list))
		}
		// Over 10,000 jobs is refused.
		big := `{"jobs":[` + strings.TrimSuffix(strings.Repeat(`{"kind":"x"},`, 10001), ",") + `]}`
		a = must(t, b.do(t, "POST", "/v1/jobs/batch", "", big), http.StatusBadRequest)
		if _, field := a.errCode(); field != "jobs" {
			t.Fatalf("field %q", field)
		}
	})
}

func TestListFiltersAndCursor(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		var ids []int64
		for i := range 25 {
			kind := "a"
			if i%5 == 0 {
				kind = "b"
			}
			j := must(t, b.do(t, "POST", "/v1/jobs", "", map[string]any{"kind": kind, "queue": "q" + strconv.Itoa(i%2),
				"tenant": "t" + strconv.Itoa(i%3), "workflow_id": "wf" + strconv.Itoa(i%4)}), 201).job()
			ids = append(ids, id(j))
		}
		// Finish one so that the listing spans live and archived jobs.
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", ids[0]), "", nil), 200)

		var seen []int64
		cursor := ""
		for pages := 0; ; pages++ {
			a := must(t, b.do(t, "GET", "/v1/jobs?limit=10&cursor="+cursor, "", nil), 200)
			for _, j := range a.jobs() {
				seen = append(seen, id(j))
			}
			cursor, _ = a.body["next_cursor"].(string)
			if cursor == "" {
				break
			}
			if pages > 5 {
				t.Fatal("the cursor does not end")
			}
		}
		if len(seen) != 25 {
			t.Fatalf("paged through %d jobs, want 25", len(seen))
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] >= seen[i-1] {
				t.Fatalf("not newest first: %v", seen)
			}
		}
		count := func(query string) int {
			return len(must(t, b.do(t, "GET", "/v1/jobs?limit=1000&"+query, "", nil), 200).jobs())
		}
		for query, want := range map[string]int{"kind=b": 5, "queue=q0": 13, "tenant=t1": 8, "workflow_id=wf3": 6,
			"state=cancelled": 1, "state=pending": 24, "state=pending,cancelled": 25, "state=cancelled&kind=b": 1,
			"kind=b&queue=q1": 2} {
			if got := count(query); got != want {
				t.Errorf("%s: %d jobs, want %d", query, got, want)
			}
		}
	})
}

func TestJobActions(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		enq := func() int64 { return id(must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x"}`), 201).job()) }
		act := func(id int64, action string, status int) map[string]any {
			return must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/%s", id, action), "", nil), status).job()
		}
		j := enq()
		if st := act(j, "pause", 200)["state"]; st != "paused" {
			t.Fatalf("paused job is %v", st)
		}
		if st := act(j, "resume", 200)["state"]; st != "pending" {
			t.Fatalf("resumed job is %v", st)
		}
		if st := act(j, "cancel", 200)["state"]; st != "cancelled" {
			t.Fatalf("cancelled job is %v", st)
		}
		if st := act(j, "retry", 200)["state"]; st != "pending" {
			t.Fatalf("retried job is %v", st)
		}
		// Wrong states are conflicts.
		a := must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/retry", j), "", nil), http.StatusConflict)
		if code, _ := a.errCode(); code != "conflict" {
			t.Fatalf("code %q", code)
		}
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/resume", j), "", nil), http.StatusConflict)
		// Unknown jobs are 404, bad ids 400.
		must(t, b.do(t, "POST", "/v1/jobs/999999999/cancel", "", nil), http.StatusNotFound)
		must(t, b.do(t, "GET", "/v1/jobs/999999999", "", nil), http.StatusNotFound)
		for _, bad := range []string{"abc", "0", "-1", "1.5", "99999999999999999999"} {
			a := must(t, b.do(t, "GET", "/v1/jobs/"+bad, "", nil), http.StatusBadRequest)
			if _, field := a.errCode(); field != "id" {
				t.Fatalf("field %q for id %q", field, bad)
			}
		}
	})
}

func TestWorkflowView(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		must(t, b.do(t, "GET", "/v1/workflows/none", "", nil), http.StatusNotFound)
		first := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"download","workflow_id":"video-1","stage":"download"}`), 201).job()
		must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"other","workflow_id":"video-2"}`), 201)
		wf := must(t, b.do(t, "GET", "/v1/workflows/video-1", "", nil), 200)
		if wf.body["workflow_id"] != "video-1" || wf.body["state"] != "running" || len(wf.jobs()) != 1 {
			t.Fatalf("workflow: %s", wf.raw)
		}
		claimed := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w","max":10}`), 200).jobs()
		for _, j := range claimed {
			next := []any{}
			if id(j) == id(first) {
				next = []any{map[string]any{"kind": "transcode", "stage": "transcode"}}
			}
			must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", id(j)), "", map[string]any{"worker_id": "w", "next": next}), 200)
		}
		wf = must(t, b.do(t, "GET", "/v1/workflows/video-1", "", nil), 200)
		jobs := wf.jobs()
		if wf.body["state"] != "running" || len(jobs) != 2 || jobs[0]["state"] != "completed" || jobs[1]["kind"] != "transcode" {
			t.Fatalf("workflow after the first stage: %s", wf.raw)
		}
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", id(jobs[1])), "", nil), 200)
		if st := must(t, b.do(t, "GET", "/v1/workflows/video-1", "", nil), 200).body["state"]; st != "cancelled" {
			t.Fatalf("workflow with a cancelled job is %v", st)
		}
	})
}

func TestQueuesKindsStatsHealth(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x","queue":"mail"}`), 201)
		q := must(t, b.do(t, "POST", "/v1/queues/mail/pause", "", nil), 200).body["queue"].(map[string]any)
		if q["name"] != "mail" || q["paused"] != true || q["counts"].(map[string]any)["pending"] != 1.0 {
			t.Fatalf("paused queue: %v", q)
		}
		// A paused queue is never claimed from.
		if jobs := must(t, b.do(t, "POST", "/v1/queues/mail/claim", "", `{"worker_id":"w"}`), 200).jobs(); len(jobs) != 0 {
			t.Fatalf("claimed %d jobs from a paused queue", len(jobs))
		}
		q = must(t, b.do(t, "POST", "/v1/queues/mail/resume", "", nil), 200).body["queue"].(map[string]any)
		if q["paused"] != false {
			t.Fatalf("resumed queue: %v", q)
		}
		list := maps(must(t, b.do(t, "GET", "/v1/queues", "", nil), 200).body["queues"])
		if len(list) != 1 || list[0]["name"] != "mail" {
			t.Fatalf("queues: %v", list)
		}
		if _, ok := list[0]["oldest_pending_age_seconds"].(float64); !ok {
			t.Fatalf("queue without oldest_pending_age_seconds: %v", list[0])
		}
		if kinds, ok := must(t, b.do(t, "GET", "/v1/kinds", "", nil), 200).body["kinds"].([]any); !ok || kinds == nil {
			t.Fatal("kinds is not a list")
		}
		st := must(t, b.do(t, "GET", "/v1/stats", "", nil), 200).body
		if st["totals"].(map[string]any)["pending"] != 1.0 || st["by_kind"].(map[string]any)["x"] == nil {
			t.Fatalf("stats: %v", st)
		}
		if h := must(t, b.do(t, "GET", "/healthz", "", nil), 200).body; h["status"] != "ok" {
			t.Fatalf("healthz: %v", h)
		}
		m := must(t, b.do(t, "GET", "/metrics", "", nil), 200)
		for _, name := range []string{"skiplock_jobs_enqueued_total{kind=\"x\",queue=\"mail\"} 1",
			"skiplock_queue_jobs{queue=\"mail\",state=\"pending\"} 1", "skiplock_queue_oldest_pending_age_seconds{queue=\"mail\"}"} {
			if !strings.Contains(string(m.raw), name) {
				t.Errorf("metrics lack %s", name)
			}
		}
	})
}

func TestSchedules(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		a := must(t, b.do(t, "PUT", "/v1/schedules/watch:acme", "", `{"kind":"scan","payload":{"site":"acme"},"every_seconds":3600,"next_run_at":"2099-01-01T00:00:00Z"}`), 200)
		sc := a.body["schedule"].(map[string]any)
		if sc["key"] != "watch:acme" || sc["every_seconds"] != 3600.0 || sc["queue"] != "default" {
			t.Fatalf("schedule: %v", sc)
		}
		must(t, b.do(t, "PUT", "/v1/schedules/watch:acme", "", `{"kind":"scan","every_seconds":60}`), 200)
		list := maps(must(t, b.do(t, "GET", "/v1/schedules", "", nil), 200).body["schedules"])
		if len(list) != 1 || list[0]["every_seconds"] != 60.0 {
			t.Fatalf("schedules: %v", list)
		}
		for body, field := range map[string]string{`{"every_seconds":60}`: "kind", `{"kind":"scan"}`: "every_seconds",
			`{"kind":"scan","every_seconds":0.5}`: "every_seconds", `{"kind":"scan","every_seconds":60,"payload":[1]}`: "payload",
			`{"kind":"scan","every_seconds":60,"next_run_at":"soon"}`: "next_run_at"} {
			a := must(t, b.do(t, "PUT", "/v1/schedules/k", "", body), http.StatusBadRequest)
			if _, f := a.errCode(); f != field {
				t.Errorf("%s: field %q, want %q", body, f, field)
			}
		}
		must(t, b.do(t, "DELETE", "/v1/schedules/watch:acme", "", nil), 200)
		must(t, b.do(t, "DELETE", "/v1/schedules/watch:acme", "", nil), http.StatusNotFound)
	})
}

const testContracts = `
version: 1
strict: true
kinds:
  file:
    queue: ingest
    ops: [ingest, delete]
    payload:
      type: object
      required: [path]
      properties:
        path: {type: string, minLength: 1}
        size: {type: integer, minimum: 0}
    unique:
      policy: active
      fields: [payload.path]
`

// TestContracts: GET /v1/kinds lists the client's contracts, and enqueues
// are validated and defaulted by them, errors naming the field.
func TestContracts(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		set, err := contract.Parse([]byte(testContracts))
		if err != nil {
			t.Fatal(err)
		}
		b := setupClient(t, db.open(t), &skiplock.Config{Contracts: set}, nil)
		kinds := maps(must(t, b.do(t, "GET", "/v1/kinds", "", nil), 200).body["kinds"])
		if len(kinds) != 1 || kinds[0]["kind"] != "file" || kinds[0]["queue"] != "ingest" {
			t.Fatalf("kinds: %v", kinds)
		}
		j := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"file","op":"ingest","payload":{"path":"/a"}}`), 201).job()
		if j["queue"] != "ingest" || j["idempotency_key"] == nil {
			t.Fatalf("job under contract: %v", j)
		}
		if a := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"file","op":"ingest","payload":{"path":"/a"}}`), 200); a.body["duplicate"] != true {
			t.Fatalf("derived key duplicate: %s", a.raw)
		}
		for body, field := range map[string]string{
			`{"kind":"fil","payload":{}}`:                                     "kind",
			`{"kind":"file","op":"scan","payload":{"path":"/b"}}`:             "op",
			`{"kind":"file","op":"ingest","payload":{}}`:                      "payload.path",
			`{"kind":"file","op":"ingest","payload":{"path":"/b","size":-1}}`: "payload.size",
		} {
			a := must(t, b.do(t, "POST", "/v1/jobs", "", body), 400)
			if _, f := a.errCode(); !strings.HasPrefix(f, field) {
				t.Errorf("%s: field %q, want %q", body, f, field)
			}
		}
	})
}

// TestListAnswerIsEncodingJSON: GET /v1/jobs, written by hand, answers
// the bytes encoding/json writes for the same page.
func TestListAnswerIsEncodingJSON(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		for i := range 3 {
			must(t, b.do(t, "POST", "/v1/jobs", "", fmt.Sprintf(`{"kind":"list<%d>","payload":{"n": %d, "s": "a&b"},"tags":["t"]}`, i, i)), 201)
		}
		got := must(t, b.do(t, "GET", "/v1/jobs?limit=2", "", nil), 200).raw
		page, err := server.ListJobs(t.Context(), b.client, skiplock.JobListParams{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(page)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want)+"\n" {
			t.Fatalf("GET /v1/jobs answered\n%s\nencoding/json writes\n%s", got, want)
		}
		if page.NextCursor == "" {
			t.Fatal("a page of 2 of 3 jobs has no next cursor")
		}
	})
}
