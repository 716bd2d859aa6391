package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/testwait"
)

// TestStatsHistoryDoesNotMove: GET /v1/stats/history counts attempts as
// they end (an HTTP worker's completion and failure), by outcome and with
// their times; retrying the failed job later leaves the counts as they
// were; a range it does not know answers 400 naming range.
func TestStatsHistoryDoesNotMove(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setupClient(t, db.open(t), &skiplock.Config{LeaderTTL: time.Second}, nil)
		if err := b.client.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.client.Stop(context.Background()) })
		for range 3 {
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"h","queue":"hq","max_retries":0}`), 201)
		}
		claimed := must(t, b.do(t, "POST", "/v1/queues/hq/claim", "", `{"worker_id":"w","max":3}`), 200).jobs()
		if len(claimed) != 3 {
			t.Fatalf("claimed %d jobs", len(claimed))
		}
		for _, j := range claimed[:2] {
			must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", id(j)), "", `{"worker_id":"w"}`), 200)
		}
		failed := id(claimed[2])
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", failed), "", `{"worker_id":"w","error":{"type":"t","message":"boom"}}`), 200)
		totals := func() map[string]float64 {
			h := must(t, b.do(t, "GET", "/v1/stats/history?range=1h&queue=hq", "", nil), 200).body
			sum := map[string]float64{}
			for _, pt := range maps(h["series"]) {
				for _, k := range []string{"completed", "failed", "retried"} {
					sum[k] += pt[k].(float64)
				}
				if pt["run_p50_seconds"] != nil {
					sum["timed"]++
				}
			}
			return sum
		}
		// The server's client writes the history every few seconds.
		testwait.Until(t, 12*time.Second, "the history to count the attempts", func() bool {
			s := totals()
			return s["completed"] == 2 && s["failed"] == 1
		})
		if s := totals(); s["timed"] < 1 || s["retried"] != 0 {
			t.Fatalf("history %v: want the attempts timed and none retried", s)
		}
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/retry", failed), "", nil), 200)
		if s := totals(); s["completed"] != 2 || s["failed"] != 1 {
			t.Fatalf("history after a retry %v: want 2 completed and 1 failed still", s)
		}
		for _, r := range []string{"24h", "7d"} {
			h := must(t, b.do(t, "GET", "/v1/stats/history?range="+r, "", nil), 200).body
			if n := len(maps(h["series"])); n != map[string]int{"24h": 96, "7d": 168}[r] {
				t.Fatalf("range %s: %d buckets", r, n)
			}
		}
		bad := must(t, b.do(t, "GET", "/v1/stats/history?range=2d", "", nil), 400)
		if _, field := bad.errCode(); field != "range" {
			t.Fatalf("range 2d: field %q, body %s", field, bad.raw)
		}
	})
}

// TestStatsHistoryCountsBatchReports: jobs HTTP workers finish through a
// batch report (POST /v1/jobs/complete) and through a claim that carries
// reports are counted once each, with their times; a job asked to cancel
// counts as cancelled, and a report the fence refuses counts not at all.
func TestStatsHistoryCountsBatchReports(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setupClient(t, db.open(t), &skiplock.Config{LeaderTTL: time.Second}, nil)
		for range 6 {
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"bk","queue":"bq"}`), 201)
		}
		claimed := must(t, b.do(t, "POST", "/v1/queues/bq/claim", "", `{"worker_id":"w","max":6}`), 200).jobs()
		if len(claimed) != 6 {
			t.Fatalf("claimed %d jobs", len(claimed))
		}
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", id(claimed[2])), "", nil), 200)
		body := fmt.Sprintf(`{"worker_id":"w","jobs":[{"id":%d},{"id":%d},{"id":%d},{"id":%d,"attempt":9}]}`,
			id(claimed[0]), id(claimed[1]), id(claimed[2]), id(claimed[5]))
		res := maps(must(t, b.do(t, "POST", "/v1/jobs/complete", "", body), 200).body["results"])
		if len(res) != 4 || res[0]["ok"] != true || res[1]["ok"] != true || res[2]["ok"] != true || res[3]["ok"] != false {
			t.Fatalf("batch report: %v; want three finished and the stale attempt refused", res)
		}
		body = fmt.Sprintf(`{"worker_id":"w","max":1,"complete":[{"id":%d},{"id":%d}]}`, id(claimed[3]), id(claimed[4]))
		must(t, b.do(t, "POST", "/v1/queues/bq/claim", "", body), 200)
		// Stop writes what the client gathered (it was not started: no
		// flush loop).
		if err := b.client.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		h := must(t, b.do(t, "GET", "/v1/stats/history?range=1h&queue=bq", "", nil), 200).body
		sum := map[string]float64{}
		for _, pt := range maps(h["series"]) {
			for _, k := range []string{"completed", "cancelled", "failed", "retried"} {
				sum[k] += pt[k].(float64)
			}
			if pt["run_p50_seconds"] != nil && pt["wait_p50_seconds"] != nil {
				sum["timed"]++
			}
		}
		if sum["completed"] != 4 || sum["cancelled"] != 1 || sum["failed"] != 0 || sum["retried"] != 0 || sum["timed"] < 1 {
			t.Fatalf("history %v: want 4 completed and 1 cancelled, timed", sum)
		}
	})
}
