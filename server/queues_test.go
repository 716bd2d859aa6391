package server_test

import (
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
