package server_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Pausing or resuming a queue nobody uses answers 404 and stores nothing,
// unless the body asks to create the queue.
func TestQueuePauseUnknownQueue(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x","queue":"mail"}`), 201)
		for _, action := range []string{"pause", "resume"} {
			a := must(t, b.do(t, "POST", "/v1/queues/mial/"+action, "", nil), 404)
			if code, _ := a.errCode(); code != "not_found" || !strings.Contains(string(a.raw), `queue \"mial\"`) {
				t.Fatalf("%s an unknown queue: %s", action, a.raw)
			}
		}
		if list := maps(must(t, b.do(t, "GET", "/v1/queues", "", nil), 200).body["queues"]); len(list) != 1 {
			t.Fatalf("a refused pause stored a queue: %v", list)
		}
		q := must(t, b.do(t, "POST", "/v1/queues/later/pause", "", `{"create": true}`), 200).body["queue"].(map[string]any)
		if q["name"] != "later" || q["paused"] != true {
			t.Fatalf("pause with create: %v", q)
		}
		if list := maps(must(t, b.do(t, "GET", "/v1/queues", "", nil), 200).body["queues"]); len(list) != 2 {
			t.Fatalf("queues after pause with create: %v", list)
		}
		a := must(t, b.do(t, "POST", "/v1/queues/later/pause", "", `{"create": "yes"}`), 400)
		if code, field := a.errCode(); code != "invalid_argument" || field != "create" {
			t.Fatalf("create of the wrong type: %s", a.raw)
		}
	})
}

// A queue whose every job finished is in GET /v1/queues and on the
// dashboard's queues page, with no live jobs.
func TestQueueOfFinishedJobsListed(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		for range 3 {
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"email","queue":"mail"}`), 201)
		}
		for _, j := range must(t, b.do(t, "POST", "/v1/queues/mail/claim", "", `{"worker_id":"w","max":3}`), 200).jobs() {
			must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%v/complete", j["id"]), "", `{"worker_id":"w"}`), 200)
		}
		list := maps(must(t, b.do(t, "GET", "/v1/queues", "", nil), 200).body["queues"])
		if len(list) != 1 || list[0]["name"] != "mail" || list[0]["counts"].(map[string]any)["pending"] != 0.0 {
			t.Fatalf("queues %v, want mail with no live jobs", list)
		}
		res, err := http.Get(b.ts.URL + "/queues")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(page), `data-queue="mail"`) {
			t.Fatalf("dashboard queues page: %d\n%s", res.StatusCode, page)
		}
	})
}
