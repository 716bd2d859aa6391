package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/server"
)

func TestWorkerProtocol(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		j := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"crawl","queue":"crawl","payload":{"url":"x"},"workflow_id":"wf"}`), 201).job()
		claimed := must(t, b.do(t, "POST", "/v1/queues/crawl/claim", "", `{"worker_id":"w1","max":5,"lease_seconds":30}`), 200).jobs()
		if len(claimed) != 1 || id(claimed[0]) != id(j) || claimed[0]["state"] != "running" || claimed[0]["lease_until"] == nil ||
			claimed[0]["worker_id"] != "w1" || claimed[0]["attempt"] != 1.0 {
			t.Fatalf("claimed: %v", claimed)
		}
		path := fmt.Sprintf("/v1/jobs/%d/", id(j))
		hb := must(t, b.do(t, "POST", path+"heartbeat", "", `{"worker_id":"w1","progress":40,"progress_message":"page 4","checkpoint":{"page":4}}`), 200).body
		if hb["lease_until"] == nil || hb["cancel_requested"] != false {
			t.Fatalf("heartbeat: %v", hb)
		}
		got := must(t, b.do(t, "GET", "/v1/jobs/"+path[len("/v1/jobs/"):len(path)-1], "", nil), 200).job()
		if got["progress"] != 40.0 || got["progress_message"] != "page 4" || got["checkpoint"].(map[string]any)["page"] != 4.0 {
			t.Fatalf("after heartbeat: %v", got)
		}
		// Another worker's reports are conflicts.
		for _, action := range []string{"heartbeat", "complete", "fail"} {
			body := `{"worker_id":"w2"}`
			if action == "fail" {
				body = `{"worker_id":"w2","error":{"type":"t","message":"m"}}`
			}
			a := must(t, b.do(t, "POST", path+action, "", body), http.StatusConflict)
			if code, _ := a.errCode(); code != "conflict" {
				t.Fatalf("%s by another worker: %s", action, a.raw)
			}
		}
		done := must(t, b.do(t, "POST", path+"complete", "", `{"worker_id":"w1","result":{"pages":9},"next":[{"kind":"enrich","payload":{"n":1}},{"kind":"enrich","queue":"other"}]}`), 200)
		if done.job()["state"] != "completed" || done.job()["result"].(map[string]any)["pages"] != 9.0 {
			t.Fatalf("completed: %s", done.raw)
		}
		next := maps(done.body["next"])
		if len(next) != 2 || next[0]["workflow_id"] != "wf" || next[1]["queue"] != "other" || next[0]["state"] != "pending" {
			t.Fatalf("next: %v", next)
		}
		// A completed job is no longer held.
		must(t, b.do(t, "POST", path+"complete", "", `{"worker_id":"w1"}`), http.StatusConflict)

		// Fail: retryable by default (scheduled with backoff), then for good.
		f := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w1"}`), 200).jobs()
		if len(f) != 1 {
			t.Fatalf("claimed %d enrich jobs", len(f))
		}
		fpath := fmt.Sprintf("/v1/jobs/%d/fail", id(f[0]))
		r := must(t, b.do(t, "POST", fpath, "", `{"worker_id":"w1","error":{"type":"Timeout","message":"slow"},"retry_in_seconds":3600}`), 200).job()
		if r["state"] != "scheduled" || len(r["errors"].([]any)) != 1 {
			t.Fatalf("retryable failure: %v", r)
		}
		// retry_in_seconds 0 makes it pending again at once.
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/retry", id(f[0])), "", nil), http.StatusConflict)
		other := must(t, b.do(t, "POST", "/v1/queues/other/claim", "", `{"worker_id":"w1"}`), 200).jobs()
		r = must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", id(other[0])), "", `{"worker_id":"w1","error":{"type":"Bad","message":"no"},"retryable":false}`), 200).job()
		if r["state"] != "failed" {
			t.Fatalf("non-retryable failure: %v", r)
		}
		m := string(must(t, b.do(t, "GET", "/metrics", "", nil), 200).raw)
		for _, name := range []string{`skiplock_jobs_completed_total{kind="crawl",queue="crawl"} 1`,
			`skiplock_jobs_failed_total{kind="enrich",queue="other"} 1`, `skiplock_jobs_retried_total{kind="enrich",queue="default"} 1`,
			`skiplock_job_duration_seconds_count{kind="crawl",queue="crawl"} 1`} {
			if !strings.Contains(m, name) {
				t.Errorf("metrics lack %s", name)
			}
		}
	})
}

func TestCancelRunningJob(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		j := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"long"}`), 201).job()
		must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w"}`), 200)
		path := fmt.Sprintf("/v1/jobs/%d/", id(j))
		if st := must(t, b.do(t, "POST", path+"cancel", "", nil), 200).job()["state"]; st != "running" {
			t.Fatalf("a running job asked to cancel is %v until its worker stops", st)
		}
		hb := must(t, b.do(t, "POST", path+"heartbeat", "", `{"worker_id":"w"}`), 200).body
		if hb["cancel_requested"] != true {
			t.Fatalf("heartbeat after cancel: %v", hb)
		}
		// Whatever the worker reports next, the job ends cancelled.
		if st := must(t, b.do(t, "POST", path+"complete", "", `{"worker_id":"w","result":1}`), 200).job()["state"]; st != "cancelled" {
			t.Fatalf("completed after cancel: %v", st)
		}
	})
}

// TestLongPollWakesOnInsert: a waiting claim answers with a job inserted
// after it started waiting. The fallback re-check is an hour, so only a
// wake-up can answer it within wait_seconds.
func TestLongPollWakesOnInsert(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, func(c *server.Config) { c.ClaimRecheckInterval = time.Hour })
		for _, via := range []string{"http", "another client"} {
			queue := strings.ReplaceAll(via, " ", "-")
			got := make(chan answer, 1)
			go func() {
				got <- b.do(t, "POST", "/v1/queues/"+queue+"/claim", "", `{"worker_id":"w","wait_seconds":60}`)
			}()
			time.Sleep(200 * time.Millisecond) // let the claim start waiting; not required for correctness
			var want int64
			if via == "http" {
				want = id(must(t, b.do(t, "POST", "/v1/jobs", "", map[string]any{"kind": "x", "queue": queue}), 201).job())
			} else {
				// Another process's insert reaches the server through the database.
				other, err := skiplock.NewClient(b.drv, nil)
				if err != nil {
					t.Fatal(err)
				}
				res, err := other.Insert(context.Background(), skiplock.RawArgs{KindName: "x"}, &skiplock.InsertOpts{Queue: queue})
				if err != nil {
					t.Fatal(err)
				}
				want = res.Job.ID
			}
			a := must(t, <-got, 200)
			if jobs := a.jobs(); len(jobs) != 1 || id(jobs[0]) != want {
				t.Fatalf("%s: long poll answered %s, want job %d", via, a.raw, want)
			}
		}
	})
}

// TestLongPollEndsOnClose: closing the server answers waiting claims.
func TestLongPollEndsOnClose(t *testing.T) {
	b := setup(t, databases[0], func(c *server.Config) { c.ClaimRecheckInterval = time.Hour })
	got := make(chan answer, 1)
	go func() { got <- b.do(t, "POST", "/v1/queues/q/claim", "", `{"worker_id":"w","wait_seconds":60}`) }()
	time.Sleep(100 * time.Millisecond)
	_ = b.srv.Close()
	if a := must(t, <-got, 200); len(a.jobs()) != 0 {
		t.Fatalf("claim on close: %s", a.raw)
	}
}

// TestClaimOfAWorkerGoneIsHandedBack: a worker that goes away while its
// claim runs (a drain cancels its request) gets nothing, and the jobs the
// claim took go back at once, attempt unspent, instead of staying running
// until their leases run out.
func TestClaimOfAWorkerGoneIsHandedBack(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		b := setupOn(t, cancelAfterClaim{Driver: db.open(t), cancel: cancel}, nil)
		j := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"crawl","queue":"gone","payload":{}}`), 201).job()
		req := httptest.NewRequestWithContext(ctx, "POST", "/v1/queues/gone/claim",
			strings.NewReader(`{"worker_id":"w1","lease_seconds":3600}`))
		b.srv.Handler().ServeHTTP(httptest.NewRecorder(), req)
		got := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", id(j)), "", nil), 200).job()
		if got["state"] != "pending" || got["attempt"] != 0.0 || got["worker_id"] != nil {
			t.Fatalf("after a claim whose worker went away: %v", got)
		}
	})
}

// cancelAfterClaim cancels a request as soon as its claim has committed.
type cancelAfterClaim struct {
	driver.Driver
	cancel func()
}

func (d cancelAfterClaim) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	jobs, err := d.Driver.JobClaim(ctx, p)
	d.cancel()
	return jobs, err
}

// TestClaimAnswersTheFieldsAsked: a claim with fields answers each job's
// id, attempt and the fields named, with the values of the whole job
// object; without fields it answers the whole object, as GET does.
func TestClaimAnswersTheFieldsAsked(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		for range 3 {
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"crawl","queue":"fields","payload":{"url":"a<b>&c","n": 1},
				"metadata":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"tags":["x"]}`), 201)
		}
		whole := must(t, b.do(t, "POST", "/v1/queues/fields/claim", "", `{"worker_id":"w","max":1}`), 200).jobs()
		if len(whole) != 1 {
			t.Fatalf("claimed %v", whole)
		}
		got := fencedJob(t, b, id(whole[0]))
		for k, v := range got {
			if fmt.Sprint(whole[0][k]) != fmt.Sprint(v) {
				t.Errorf("claimed %s = %v, GET answers %v", k, whole[0][k], v)
			}
		}
		if len(whole[0]) != len(got) {
			t.Errorf("claim answers %d fields, GET %d", len(whole[0]), len(got))
		}

		some := must(t, b.do(t, "POST", "/v1/queues/fields/claim", "", `{"worker_id":"w","max":5,"fields":["payload","kind","traceparent"]}`), 200)
		if !strings.Contains(string(some.raw), `"payload":{"n":1,"url":"a\u003cb\u003e\u0026c"}`) &&
			!strings.Contains(string(some.raw), `"payload":{"url":"a\u003cb\u003e\u0026c","n":1}`) {
			t.Errorf("payload not written compact with HTML escaped: %s", some.raw)
		}
		for _, j := range some.jobs() {
			if len(j) != 5 || j["attempt"] != 1.0 || j["kind"] != "crawl" || j["traceparent"] == nil || j["payload"] == nil || id(j) == 0 {
				t.Errorf("claimed with fields: %v", j)
			}
		}
		if len(some.jobs()) != 2 {
			t.Fatalf("claimed %d jobs", len(some.jobs()))
		}
		must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"crawl","queue":"fields"}`), 201)
		bare := must(t, b.do(t, "POST", "/v1/queues/fields/claim", "", `{"worker_id":"w","fields":[]}`), 200).jobs()
		if len(bare) != 1 || len(bare[0]) != 2 || bare[0]["attempt"] != 1.0 {
			t.Errorf("claimed with no fields named: %v", bare)
		}
	})
}
