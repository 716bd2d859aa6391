package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// TestJanitorStatus: GET /v1/janitor answers the retention and the runs
// of any process, newest first; a bad limit answers 400 naming it; the
// metrics show the last run.
func TestJanitorStatus(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db database) {
		b := setupClient(t, db.open(t), &skiplock.Config{Retention: skiplock.Retention{Failed: skiplock.KeepForever,
			Rules: []skiplock.RetentionRule{{State: skiplock.StateCompleted, Queue: "audit", Keep: 90 * 24 * time.Hour}}}}, nil)
		if _, err := b.client.JanitorRun(t.Context(), skiplock.JanitorOptions{DryRun: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.client.JanitorRun(t.Context(), skiplock.JanitorOptions{}); err != nil {
			t.Fatal(err)
		}
		a := b.do(t, "GET", "/v1/janitor?limit=5", "", nil)
		runs := maps(a.body["runs"])
		if a.status != 200 || len(runs) != 2 || runs[0]["dry_run"] != false || runs[1]["dry_run"] != true ||
			runs[0]["outcome"] != "ok" {
			t.Fatalf("GET /v1/janitor: %d %s", a.status, a.raw)
		}
		ret, _ := a.body["retention"].(map[string]any)
		rules := maps(ret["rules"])
		if ret["completed_seconds"] != float64(7*24*3600) || ret["failed_seconds"] != nil || len(rules) != 1 ||
			rules[0]["queue"] != "audit" || ret["enabled"] != true {
			t.Fatalf("retention: %s", a.raw)
		}
		for _, bad := range []string{"0", "1001", "x"} {
			a := b.do(t, "GET", "/v1/janitor?limit="+bad, "", nil)
			if code, field := a.errCode(); a.status != 400 || code != "invalid_argument" || field != "limit" {
				t.Fatalf("limit=%s: %d %s", bad, a.status, a.raw)
			}
		}
		m := b.do(t, "GET", "/metrics", "", nil)
		if !strings.Contains(string(m.raw), `skiplock_janitor_last_run_timestamp_seconds{outcome="ok"}`) ||
			!strings.Contains(string(m.raw), `skiplock_janitor_last_run_jobs_deleted{state="completed"} 0`) {
			t.Fatalf("metrics lack the janitor's last run:\n%s", m.raw)
		}
	})
}
