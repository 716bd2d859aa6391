package server_test

import (
	"fmt"
	"testing"
)

// TestStrictBodies: a field no route declares, invalid UTF-8, a lone UTF-16
// surrogate and an id that is not plain decimal answer 400 naming the
// input at fault, and nothing is stored.
func TestStrictBodies(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		held := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"held"}`), 201).job()
		must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w"}`), 200)
		jp := fmt.Sprintf("/v1/jobs/%d/", id(held))
		cases := []struct{ method, path, body, field string }{
			{"POST", "/v1/jobs", `{"kind":"x","priorty":3}`, "priorty"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":{"priorty":3},"metadata":{"a":1},"bogus":{"a":1}}`, "bogus"},
			{"POST", "/v1/jobs/batch", `{"jobs":[{"kind":"x"},{"kind":"x"},{"kind":"x"},{"kind":"x","priorty":3}]}`, "jobs[3].priorty"},
			{"POST", "/v1/jobs/batch", `{"jobs":[{"kind":"x"}],"atomic":true}`, "atomic"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","maxx":2}`, "maxx"},
			{"POST", jp + "heartbeat", `{"worker_id":"w","progres":5}`, "progres"},
			{"POST", jp + "complete", `{"worker_id":"w","next":[{"kind":"n","x":1}]}`, "next[0].x"},
			{"POST", jp + "complete", `{"worker_id":"w","reslt":{}}`, "reslt"},
			{"POST", jp + "fail", `{"worker_id":"w","error":{"type":"t","mesage":"m"}}`, "error.mesage"},
			{"POST", jp + "fail", `{"worker_id":"w","retry_in":5}`, "retry_in"},
			{"PUT", "/v1/schedules/k", `{"kind":"x","every_seconds":60,"every":"1m"}`, "every"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":{"a":"\ud800"}}`, "payload.a"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":{"a":"\udc00\ud800"}}`, "payload.a"},
			{"POST", "/v1/jobs", `{"kind":"x","tags":["ok","\ud83d"]}`, "tags[1]"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":{"\ud800":1}}`, "payload"},
			{"POST", "/v1/jobs", "{\"kind\":\"x\",\"payload\":{\"a\":\"\xff\"}}", "payload.a"},
			{"POST", "/v1/jobs", "{\"kind\":\"x\xc3\"}", "kind"},
			{"POST", "/v1/jobs/batch", `{"jobs":[{"kind":"x"},{"kind":"x","metadata":{"m":["\udfff"]}}]}`, "jobs[1].metadata.m[0]"},
			{"POST", jp + "complete", `{"worker_id":"w","result":{"r":"\ud800x"}}`, "result.r"},
			{"PUT", "/v1/schedules/k", `{"kind":"x","every_seconds":60,"payload":{"p":"\ud800"}}`, "payload.p"},
			{"GET", "/v1/jobs/+1", "", "id"},
			{"GET", "/v1/jobs/01", "", "id"},
			{"POST", "/v1/jobs/+1/cancel", "", "id"},
			{"POST", "/v1/jobs/+" + jp[len("/v1/jobs/"):] + "heartbeat", `{"worker_id":"w"}`, "id"},
			{"GET", "/v1/jobs?cursor=+5", "", "cursor"},
		}
		for _, c := range cases {
			a := b.do(t, c.method, c.path, "", c.body)
			if code, field := a.errCode(); a.status != 400 || code != "invalid_argument" || field != c.field {
				t.Errorf("%s %s %q: %d %s; want 400 naming %q", c.method, c.path, c.body, a.status, a.raw, c.field)
			}
		}
		// Paired surrogates and escaped backslashes are text like any other.
		ok := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x","payload":{"a":"\ud83d\ude00 \\ud800"}}`), 201).job()
		if p := ok["payload"].(map[string]any)["a"]; p != "😀 \\ud800" {
			t.Errorf("payload.a = %q", p)
		}
		if n := len(must(t, b.do(t, "GET", "/v1/jobs", "", nil), 200).jobs()); n != 2 {
			t.Errorf("%d jobs stored, want 2 (nothing from refused requests)", n)
		}
		if s := must(t, b.do(t, "GET", "/v1/schedules", "", nil), 200).body["schedules"]; len(s.([]any)) != 0 {
			t.Errorf("schedules stored by refused requests: %v", s)
		}
		must(t, b.do(t, "GET", "/v1/jobs/"+fmt.Sprint(id(ok)), "", nil), 200)
	})
}
