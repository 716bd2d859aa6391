package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"
)

// TestPauseRunningJobOverHTTP: pausing a running job answers it running;
// its heartbeat says pause_requested; the worker's failure report pauses it
// with its checkpoint, and resumed, the next claim gets the checkpoint.
func TestPauseRunningJobOverHTTP(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		jid := id(must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"crawl","queue":"c"}`), 201).job())
		path := func(action string) string { return fmt.Sprintf("/v1/jobs/%d/%s", jid, action) }
		if n := len(must(t, b.do(t, "POST", "/v1/queues/c/claim", "", `{"worker_id":"w1"}`), 200).jobs()); n != 1 {
			t.Fatalf("claimed %d", n)
		}
		beat := `{"worker_id":"w1","attempt":1,"checkpoint":{"page":7}}`
		if a := must(t, b.do(t, "POST", path("heartbeat"), "", beat), 200); a.body["pause_requested"] != false {
			t.Fatalf("heartbeat before the pause: %v", a.body)
		}
		if st := must(t, b.do(t, "POST", path("pause"), "", nil), 200).job()["state"]; st != "running" {
			t.Fatalf("paused running job answers %v, want running", st)
		}
		a := must(t, b.do(t, "POST", path("heartbeat"), "", `{"worker_id":"w1","attempt":1}`), 200)
		if a.body["pause_requested"] != true || a.body["cancel_requested"] != false {
			t.Fatalf("heartbeat after the pause: %v", a.body)
		}
		j := must(t, b.do(t, "POST", path("fail"), "", `{"worker_id":"w1","attempt":1,"error":{"type":"paused","message":"asked"}}`), 200).job()
		if j["state"] != "paused" || j["attempt"] != float64(0) || len(j["errors"].([]any)) != 0 {
			t.Fatalf("after the worker stopped: %v", j)
		}
		must(t, b.do(t, "POST", path("resume"), "", nil), 200)
		// A claim starts after where the last one ended until a claim from
		// the head is due; the resumed job sits before it.
		var again []map[string]any
		testwait.Until(t, 20*time.Second, "the resumed job claimed", func() bool {
			again = must(t, b.do(t, "POST", "/v1/queues/c/claim", "", `{"worker_id":"w2"}`), 200).jobs()
			return len(again) > 0
		})
		if len(again) != 1 || again[0]["attempt"] != float64(1) || fmt.Sprint(again[0]["checkpoint"]) != "map[page:7]" {
			t.Fatalf("claimed again: %v", again)
		}
		// A running job asked to cancel cannot be paused.
		must(t, b.do(t, "POST", path("cancel"), "", nil), 200)
		a = must(t, b.do(t, "POST", path("pause"), "", nil), http.StatusConflict)
		if code, _ := a.errCode(); code != "conflict" {
			t.Fatalf("pause a job asked to cancel: %v", a.body)
		}
	})
}
