package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestCompleteMany: one call finishes a worker's jobs, each fenced on its
// attempt; a refused job answers its own error in place and holds the
// others back neither; completions count by kind and queue.
func TestCompleteMany(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		for range 4 {
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"crawl","queue":"many"}`), 201)
		}
		other := id(must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"crawl","queue":"many"}`), 201).job())
		claimed := must(t, b.do(t, "POST", "/v1/queues/many/claim", "", `{"worker_id":"w","max":4}`), 200).jobs()
		if len(claimed) != 4 {
			t.Fatalf("claimed %d jobs", len(claimed))
		}
		body := fmt.Sprintf(`{"worker_id":"w","jobs":[
			{"id":%d,"attempt":1,"result":{"n":1}},
			{"id":%d,"attempt":2},
			{"id":%d},
			{"id":%d,"attempt":1},
			{"id":999999,"attempt":1},
			{"id":%d,"attempt":1}]}`,
			id(claimed[0]), id(claimed[1]), id(claimed[2]), other, id(claimed[3]))
		res := maps(must(t, b.do(t, "POST", "/v1/jobs/complete", "", body), 200).body["results"])
		want := []struct {
			ok   bool
			code string
		}{{true, ""}, {false, "conflict"}, {true, ""}, {false, "conflict"}, {false, "not_found"}, {true, ""}}
		if len(res) != len(want) {
			t.Fatalf("results %v", res)
		}
		for i, w := range want {
			e, _ := res[i]["error"].(map[string]any)
			if res[i]["ok"] != w.ok || (w.code != "" && (e == nil || e["code"] != w.code || e["message"] == "")) {
				t.Errorf("results[%d] = %v, want ok %v code %q", i, res[i], w.ok, w.code)
			}
		}
		for i, st := range []string{"completed", "running", "completed", "completed"} {
			if got := fencedJob(t, b, id(claimed[i]))["state"]; got != st {
				t.Errorf("job %d is %v, want %s", i, got, st)
			}
		}
		if r := fencedJob(t, b, id(claimed[0]))["result"].(map[string]any); r["n"] != 1.0 {
			t.Errorf("result %v", r)
		}
		if got := fencedJob(t, b, other)["state"]; got != "pending" {
			t.Errorf("an unclaimed job named in the batch is %v", got)
		}
		m := string(must(t, b.do(t, "GET", "/metrics", "", nil), 200).raw)
		for _, line := range []string{`skiplock_jobs_completed_total{kind="crawl",queue="many"} 3`,
			`skiplock_job_duration_seconds_count{kind="crawl",queue="many"} 3`} {
			if !strings.Contains(m, line) {
				t.Errorf("metrics lack %s", line)
			}
		}
	})
}

// Bad input answers 400 naming the field, and stores nothing.
func TestCompleteManyInput(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"k"}`), 201)
		j := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w"}`), 200).jobs()[0]
		ok := fmt.Sprintf(`{"id":%d,"attempt":1}`, id(j))
		for body, field := range map[string]string{
			`{"jobs":[` + ok + `]}`:                                                  "worker_id",
			`{"worker_id":"w"}`:                                                      "jobs",
			`{"worker_id":"w","jobs":[]}`:                                            "jobs",
			`{"worker_id":"w","jobs":[` + ok + `,{"attempt":1}]}`:                    "jobs[1].id",
			`{"worker_id":"w","jobs":[` + ok + `,{"id":0}]}`:                         "jobs[1].id",
			`{"worker_id":"w","jobs":[` + ok + `,` + ok + `]}`:                       "jobs[1].id",
			`{"worker_id":"w","jobs":[` + ok + `,{"id":5,"attempt":0}]}`:             "jobs[1].attempt",
			`{"worker_id":"w","jobs":[{"id":1,"atempt":1}]}`:                         "jobs[0].atempt",
			`{"worker_id":"w","jobs":[` + ok + `,{"id":5,"result":{"a":"\u0000"}}]}`: "jobs[1].result",
		} {
			a := must(t, b.do(t, "POST", "/v1/jobs/complete", "", body), http.StatusBadRequest)
			if code, f := a.errCode(); code != "invalid_argument" || f != field {
				t.Errorf("%s: %s, want field %s", body, a.raw, field)
			}
		}
		many := `{"worker_id":"w","jobs":[` + strings.Repeat(ok+",", 1000) + ok + `]}`
		if _, f := must(t, b.do(t, "POST", "/v1/jobs/complete", "", many), http.StatusBadRequest).errCode(); f != "jobs" {
			t.Errorf("1,001 jobs: field %q", f)
		}
		if got := fencedJob(t, b, id(j)); got["state"] != "running" {
			t.Fatalf("bad batches changed the job: %v", got)
		}
	})
}

// A tenant-scoped worker reports on its tenant's jobs only, in a batch
// report or with a claim; another tenant's job is not found, and stays
// running.
func TestCompleteManyTenant(t *testing.T) {
	for _, via := range []struct{ name, path, list, answer string }{
		{"batch report", "/v1/jobs/complete", "jobs", "results"},
		{"claim", "/v1/queues/default/claim", "complete", "completed"},
	} {
		t.Run(via.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, db database) {
				b := setup(t, db, nil)
				admin := createToken(t, b.drv, "admin", "")
				aWorker := createToken(t, b.drv, "worker", "a")
				must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"k","tenant":"a"}`), 201)
				must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"k","tenant":"b"}`), 201)
				jobs := must(t, b.do(t, "POST", "/v1/queues/default/claim", admin, `{"worker_id":"w","max":2}`), 200).jobs()
				if len(jobs) != 2 {
					t.Fatalf("claimed %v", jobs)
				}
				body := fmt.Sprintf(`{"worker_id":"w","%s":[{"id":%d,"attempt":1},{"id":%d,"attempt":1}]}`,
					via.list, id(jobs[0]), id(jobs[1]))
				res := maps(must(t, b.do(t, "POST", via.path, aWorker, body), 200).body[via.answer])
				for i, j := range jobs {
					e, _ := res[i]["error"].(map[string]any)
					mine := j["tenant"] == "a"
					if res[i]["ok"] != mine || (!mine && (e == nil || e["code"] != "not_found")) {
						t.Errorf("tenant %v: %v", j["tenant"], res[i])
					}
					want := map[bool]string{true: "completed", false: "running"}[mine]
					if got := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", id(j)), admin, nil), 200).job()["state"]; got != want {
						t.Errorf("tenant %v job is %v, want %s", j["tenant"], got, want)
					}
				}
			})
		})
	}
}

// TestClaimCarriesReport: a claim's "complete" reports the worker's last
// jobs as POST /v1/jobs/complete does, and "completed" answers each in
// order; the claim then takes other jobs.
func TestClaimCarriesReport(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		for range 6 {
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"crawl","queue":"rounds"}`), 201)
		}
		first := must(t, b.do(t, "POST", "/v1/queues/rounds/claim", "", `{"worker_id":"w","max":2}`), 200)
		if _, ok := first.body["completed"]; ok {
			t.Errorf("a claim without complete answers completed: %s", first.raw)
		}
		held := first.jobs()
		body := fmt.Sprintf(`{"worker_id":"w","max":2,"complete":[
			{"id":%d,"attempt":1,"result":{"n":1}},
			{"id":%d,"attempt":2},
			{"id":999999,"attempt":1}]}`, id(held[0]), id(held[1]))
		a := must(t, b.do(t, "POST", "/v1/queues/rounds/claim", "", body), 200)
		res := maps(a.body["completed"])
		want := []struct {
			id   int64
			ok   bool
			code string
		}{{id(held[0]), true, ""}, {id(held[1]), false, "conflict"}, {999999, false, "not_found"}}
		if len(res) != len(want) {
			t.Fatalf("completed %v", res)
		}
		for i, w := range want {
			e, _ := res[i]["error"].(map[string]any)
			if res[i]["id"] != float64(w.id) || res[i]["ok"] != w.ok || (w.code != "" && (e == nil || e["code"] != w.code)) {
				t.Errorf("completed[%d] = %v, want id %d ok %v code %q", i, res[i], w.id, w.ok, w.code)
			}
		}
		next := a.jobs()
		if len(next) != 2 {
			t.Fatalf("claimed %d jobs with the report", len(next))
		}
		for _, j := range next {
			if id(j) == id(held[0]) || id(j) == id(held[1]) || j["state"] != "running" {
				t.Errorf("claimed %v", j)
			}
		}
		if got := fencedJob(t, b, id(held[0])); got["state"] != "completed" || got["result"].(map[string]any)["n"] != 1.0 {
			t.Errorf("the reported job: %v", got)
		}
		if got := fencedJob(t, b, id(held[1]))["state"]; got != "running" {
			t.Errorf("the job reported with another attempt is %v", got)
		}
		// A report sent again (its answer was lost) answers conflict,
		// naming the job completed.
		again := fmt.Sprintf(`{"worker_id":"w","max":1,"complete":[{"id":%d,"attempt":1}]}`, id(held[0]))
		res = maps(must(t, b.do(t, "POST", "/v1/queues/rounds/claim", "", again), 200).body["completed"])
		if e, _ := res[0]["error"].(map[string]any); res[0]["ok"] != false || e == nil || e["code"] != "conflict" ||
			!strings.Contains(fmt.Sprint(e["message"]), "completed") {
			t.Errorf("a report sent again: %v", res)
		}
		// An empty report answers an empty outcome list.
		a = must(t, b.do(t, "POST", "/v1/queues/rounds/claim", "", `{"worker_id":"w","max":1,"complete":[]}`), 200)
		if done, ok := a.body["completed"].([]any); !ok || len(done) != 0 || len(a.jobs()) != 1 {
			t.Errorf("an empty report: %s", a.raw)
		}
		m := string(must(t, b.do(t, "GET", "/metrics", "", nil), 200).raw)
		if line := `skiplock_jobs_completed_total{kind="crawl",queue="rounds"} 1`; !strings.Contains(m, line) {
			t.Errorf("metrics lack %s", line)
		}
	})
}

// A claim with a bad report answers 400 naming the field, reports
// nothing and claims nothing.
func TestClaimReportInput(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"k"}`), 201)
		other := id(must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"k"}`), 201).job())
		j := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w"}`), 200).jobs()[0]
		ok := fmt.Sprintf(`{"id":%d,"attempt":1}`, id(j))
		for body, field := range map[string]string{
			`{"worker_id":"w","complete":[` + ok + `,{"attempt":1}]}`:                    "complete[1].id",
			`{"worker_id":"w","complete":[` + ok + `,{"id":0}]}`:                         "complete[1].id",
			`{"worker_id":"w","complete":[` + ok + `,` + ok + `]}`:                       "complete[1].id",
			`{"worker_id":"w","complete":[` + ok + `,{"id":5,"attempt":0}]}`:             "complete[1].attempt",
			`{"worker_id":"w","complete":[{"id":1,"atempt":1}]}`:                         "complete[0].atempt",
			`{"worker_id":"w","complete":[` + ok + `,{"id":5,"result":{"a":"\u0000"}}]}`: "complete[1].result",
			`{"worker_id":"w","complete":{"id":1}}`:                                      "complete",
			`{"complete":[` + ok + `]}`:                                                  "worker_id",
		} {
			a := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", body), http.StatusBadRequest)
			if code, f := a.errCode(); code != "invalid_argument" || f != field {
				t.Errorf("%s: %s, want field %s", body, a.raw, field)
			}
		}
		many := `{"worker_id":"w","complete":[` + strings.Repeat(ok+",", 1000) + ok + `]}`
		if _, f := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", many), http.StatusBadRequest).errCode(); f != "complete" {
			t.Errorf("1,001 jobs: field %q", f)
		}
		if got := fencedJob(t, b, id(j)); got["state"] != "running" {
			t.Fatalf("bad reports changed the job: %v", got)
		}
		if got := fencedJob(t, b, other); got["state"] != "pending" {
			t.Fatalf("a claim with a bad report claimed: %v", got)
		}
	})
}
