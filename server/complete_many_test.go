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

// A tenant-scoped worker reports on its tenant's jobs only; another
// tenant's job is not found, and stays running.
func TestCompleteManyTenant(t *testing.T) {
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
		body := fmt.Sprintf(`{"worker_id":"w","jobs":[{"id":%d,"attempt":1},{"id":%d,"attempt":1}]}`, id(jobs[0]), id(jobs[1]))
		res := maps(must(t, b.do(t, "POST", "/v1/jobs/complete", aWorker, body), 200).body["results"])
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
}
