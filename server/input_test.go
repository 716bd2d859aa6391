package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/server"
)

// TestBadInput: every bad input answers a 4xx naming what is wrong, and
// nothing reaches a 5xx (request fails the test on any 5xx but 503).
func TestBadInput(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, func(c *server.Config) { c.MaxPayloadBytes = 1000 })
		must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x"}`), 201)
		big := `{"kind":"x","payload":{"s":"` + strings.Repeat("a", 2000) + `"}}`
		deep := `{"kind":"x","payload":{"a":` + strings.Repeat(`[`, 300) + strings.Repeat("]", 300) + "}}"
		cases := []struct {
			method, path, body string
			status             int
			field              string
		}{
			{"POST", "/v1/jobs", `{"kind":`, 400, ""},
			{"POST", "/v1/jobs", `not json`, 400, ""},
			{"POST", "/v1/jobs", `[1,2]`, 400, ""},
			{"POST", "/v1/jobs", `{"kind":"x"} {"kind":"y"}`, 400, ""},
			{"POST", "/v1/jobs", `{}`, 400, "kind"},
			{"POST", "/v1/jobs", `{"kind":5}`, 400, "kind"},
			{"POST", "/v1/jobs", `{"kind":"x","priority":"high"}`, 400, "priority"},
			{"POST", "/v1/jobs", `{"kind":"x","priority":11}`, 400, "priority"},
			{"POST", "/v1/jobs", `{"kind":"x","priority":-1}`, 400, "priority"},
			{"POST", "/v1/jobs", `{"kind":"x","priority":5.5}`, 400, "priority"},
			{"POST", "/v1/jobs", `{"kind":"x","priority":1e30}`, 400, "priority"},
			{"POST", "/v1/jobs", `{"kind":"x","max_retries":-1}`, 400, "max_retries"},
			{"POST", "/v1/jobs", `{"kind":"x","max_retries":99999999999}`, 400, "max_retries"},
			{"POST", "/v1/jobs", `{"kind":"x","run_at":"tomorrow"}`, 400, "run_at"},
			{"POST", "/v1/jobs", `{"kind":"x","run_at":12}`, 400, "run_at"},
			{"POST", "/v1/jobs", `{"kind":"x","delay_seconds":-5}`, 400, "delay_seconds"},
			{"POST", "/v1/jobs", `{"kind":"x","delay_seconds":1e300}`, 400, "delay_seconds"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":[1]}`, 400, "payload"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":"s"}`, 400, "payload"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":{"a":"\u0000"}}`, 400, "payload"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":{"a":1e999}}`, 400, "payload"},
			{"POST", "/v1/jobs", `{"kind":"x","payload":{"a":"\ud800"}}`, 400, "payload.a"},
			{"POST", "/v1/jobs", deep, 400, "payload"},
			{"POST", "/v1/jobs", big, 413, "payload"},
			{"POST", "/v1/jobs", `{"kind":"x","metadata":{"a":"\u0000"}}`, 400, "metadata"},
			{"POST", "/v1/jobs", `{"kind":"x\u0000"}`, 400, "kind"},
			{"POST", "/v1/jobs", `{"kind":"` + strings.Repeat("k", 300) + `"}`, 400, "kind"},
			{"POST", "/v1/jobs", `{"kind":"x","idempotency_key":"` + strings.Repeat("k", 600) + `"}`, 400, "idempotency_key"},
			{"POST", "/v1/jobs", `{"kind":"x","tags":"t"}`, 400, "tags"},
			{"POST", "/v1/jobs", `{"kind":"x","tags":["a\u0000"]}`, 400, "tags[0]"},
			{"POST", "/v1/jobs", `{"kind":"x","depends_on":[0]}`, 400, "depends_on[0]"},
			{"POST", "/v1/jobs", `{"kind":"x","depends_on":["a"]}`, 400, "depends_on"},
			{"POST", "/v1/jobs", `{"kind":"x","depends_on":[999999999]}`, 400, "depends_on[0]"},
			{"POST", "/v1/jobs/batch", `{"jobs":[{"kind":"x"},{"kind":"y","depends_on":[1,999999999]}]}`, 400, "jobs[1].depends_on[1]"},
			{"POST", "/v1/jobs", `{"kind":"x","unknown_field":1}`, 400, "unknown_field"},
			{"POST", "/v1/jobs/batch", `{}`, 400, "jobs"},
			{"POST", "/v1/jobs/batch", `{"jobs":[]}`, 400, "jobs"},
			{"POST", "/v1/jobs/batch", `{"jobs":{}}`, 400, "jobs"},
			{"POST", "/v1/jobs/batch", `{"jobs":[{"kind":"x"},5]}`, 400, "jobs[1]"},
			{"POST", "/v1/jobs/batch", `{"jobs":[{"kind":"x"},{"kind":"x","run_at":"x"}]}`, 400, "jobs[1].run_at"},
			{"GET", "/v1/jobs?state=done", "", 400, "state"},
			{"GET", "/v1/jobs?limit=0", "", 400, "limit"},
			{"GET", "/v1/jobs?limit=1001", "", 400, "limit"},
			{"GET", "/v1/jobs?limit=ten", "", 400, "limit"},
			{"GET", "/v1/jobs?cursor=abc", "", 400, "cursor"},
			{"GET", "/v1/jobs?kind=%FF", "", 400, "kind"},
			{"GET", "/v1/jobs?queue=%00", "", 400, "queue"},
			{"GET", "/v1/jobs/abc", "", 400, "id"},
			{"POST", "/v1/jobs/abc/cancel", "", 400, "id"},
			{"GET", "/v1/workflows/%00", "", 400, "workflow_id"},
			{"POST", "/v1/queues/q/claim", `{}`, 400, "worker_id"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","max":0}`, 400, "max"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","max":5000}`, 400, "max"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","wait_seconds":61}`, 400, "wait_seconds"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","wait_seconds":"x"}`, 400, "wait_seconds"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","lease_seconds":0}`, 400, "lease_seconds"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","kinds":[1]}`, 400, "kinds"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","fields":["kind","colour"]}`, 400, "fields[1]"},
			{"POST", "/v1/queues/q/claim", `{"worker_id":"w","fields":"kind"}`, 400, "fields"},
			{"POST", "/v1/queues/%00/claim", `{"worker_id":"w"}`, 400, "queue"},
			{"POST", "/v1/jobs/1/heartbeat", `{}`, 400, "worker_id"},
			{"POST", "/v1/jobs/1/heartbeat", `{"worker_id":"w","progress":101}`, 400, "progress"},
			{"POST", "/v1/jobs/1/heartbeat", `{"worker_id":"w","progress":"x"}`, 400, "progress"},
			{"POST", "/v1/jobs/1/heartbeat", `{"worker_id":"w","progress_message":"` + strings.Repeat("a", 5000) + `"}`, 400, "progress_message"},
			{"POST", "/v1/jobs/1/heartbeat", `{"worker_id":"w","checkpoint":{"a":"\u0000"}}`, 400, "checkpoint"},
			{"POST", "/v1/jobs/1/complete", `{"worker_id":"w","next":[{"kind":"x","priority":20}]}`, 400, "next[0].priority"},
			{"POST", "/v1/jobs/1/complete", `{"worker_id":"w","result":{"s":"` + strings.Repeat("a", 2000) + `"}}`, 413, "result"},
			{"POST", "/v1/jobs/1/fail", `{"worker_id":"w","error":{"type":"t","message":"m"},"retry_in_seconds":-1}`, 400, "retry_in_seconds"},
			{"POST", "/v1/jobs/1/fail", `{"worker_id":"w","retryable":"yes"}`, 400, "retryable"},
			{"POST", "/v1/jobs/1/fail", `{"worker_id":"w","retryable":false}`, 400, "error"},
			{"POST", "/v1/jobs/1/cancel", `{"bogus":1}`, 400, "bogus"},
			{"POST", "/v1/jobs/1/retry", `garbage`, 400, ""},
			{"POST", "/v1/jobs/1/pause", `{"now":true}`, 400, "now"},
			{"POST", "/v1/jobs/1/resume", `[]`, 400, ""},
			{"POST", "/v1/jobs/1/fail", `{"worker_id":"w","error":"boom"}`, 400, "error"},
			{"POST", "/v1/jobs/1/fail", `{"worker_id":"w","error":{"type":"a\u0000"}}`, 400, "error.type"},
			{"POST", "/v1/jobs/1/fail", `{"worker_id":"w","error":{"message":"` + strings.Repeat("a", 70000) + `"}}`, 400, "error.message"},
			{"POST", "/v1/jobs/999999/complete", `{"worker_id":"w"}`, 404, ""},
			{"PUT", "/v1/schedules/k", `{"kind":"x","every_seconds":-1}`, 400, "every_seconds"},
			{"GET", "/v1/nope", "", 404, ""},
			{"GET", "/nope", "", 404, ""},
			{"DELETE", "/v1/jobs/1", "", 405, ""},
			{"PUT", "/v1/jobs", "", 405, ""},
		}
		for _, c := range cases {
			a := b.do(t, c.method, c.path, "", c.body)
			if a.status != c.status {
				t.Errorf("%s %s %.80s: status %d, want %d: %s", c.method, c.path, c.body, a.status, c.status, a.raw)
				continue
			}
			if c.status < 400 {
				continue
			}
			code, field := a.errCode()
			if code == "" || field != c.field {
				t.Errorf("%s %s %.80s: error %q field %q, want field %q: %s", c.method, c.path, c.body, code, field, c.field, a.raw)
			}
		}
		// A body over the limit is refused before it is read whole.
		a := b.do(t, "POST", "/v1/jobs", "", `{"kind":"x","payload":{"s":"`+strings.Repeat("a", 2<<20)+`"}}`)
		if code, _ := a.errCode(); a.status != 413 || code != "payload_too_large" {
			t.Errorf("huge body: %d %s", a.status, code)
		}
		// Nothing half-stored: only the accepted jobs exist.
		jobs := must(t, b.do(t, "GET", "/v1/jobs?limit=1000", "", nil), 200).jobs()
		if len(jobs) != 1 {
			t.Errorf("%d jobs stored, want 1", len(jobs))
		}
	})
}

// TestDatabaseDown: requests answer 503 unavailable and /healthz 503.
func TestDatabaseDown(t *testing.T) {
	_, url := pgtest.Schema(t)
	drv, err := pgdriver.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	b := setupOn(t, drv, nil)
	must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x"}`), 201)
	// Close waits for the server's listening connection, released when
	// the server closes at the end of the test; new queries fail at once.
	go drv.Close()
	for i := 0; b.do(t, "GET", "/healthz", "", nil).status == 200; i++ {
		if i > 1000 {
			t.Fatal("the database does not go down")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, r := range []struct{ method, path, body string }{{"GET", "/healthz", ""}, {"POST", "/v1/jobs", `{"kind":"x"}`},
		{"GET", "/v1/jobs", ""}, {"GET", "/v1/jobs/1", ""}, {"POST", "/v1/queues/q/claim", `{"worker_id":"w"}`}} {
		a := b.do(t, r.method, r.path, "", r.body)
		if code, _ := a.errCode(); a.status != http.StatusServiceUnavailable || code != "unavailable" {
			t.Errorf("%s %s with the database down: %d %s", r.method, r.path, a.status, a.raw)
		}
	}
}

// TestRecoverAnswersJSON: a panic in a handler answers 500 JSON (no input
// reaches this; the panic here is forced through a broken client).
func TestRecoverAnswersJSON(t *testing.T) {
	var c *skiplock.Client
	_, err := server.New(server.Config{Client: c})
	if err == nil {
		t.Fatal("New without a client must fail")
	}
	_ = fmt.Sprint()
}
