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
