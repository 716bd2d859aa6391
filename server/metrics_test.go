package server_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// twoDrivers answers two drivers on one database, as two processes have.
func twoDrivers(t *testing.T, db database) (driver.Driver, driver.Driver) {
	if db.name == "sqlite" {
		path := filepath.Join(t.TempDir(), "skiplock.db")
		return sqlitetest.Open(t, path), sqlitetest.Open(t, path)
	}
	d, url := pgtest.Schema(t)
	return d, pgtest.Open(t, url)
}

// clusterLines answers the scrape's lines of the gauges read from the
// database, sorted.
func clusterLines(t *testing.T, b *bundle) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(string(must(t, b.do(t, "GET", "/metrics", "", nil), 200).raw), "\n") {
		for _, p := range []string{"skiplock_jobs{", "skiplock_jobs_retry_waiting{", "skiplock_jobs_finished_recent{",
			"skiplock_queue_jobs{", "skiplock_jobs_rescued_total{", "skiplock_database_up "} {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Jobs enter through one server and are worked through another: both
// servers' /metrics show the same cluster, counted from the database.
func TestMetricsShowTheWholeCluster(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		d1, d2 := twoDrivers(t, db)
		in, out := setupOn(t, d1, nil), setupOn(t, d2, nil)
		for _, kind := range []string{"m.done", "m.done", "m.bad", "m.retry", "m.wait"} {
			must(t, in.do(t, "POST", "/v1/jobs", "", fmt.Sprintf(`{"kind":%q,"queue":"q1"}`, kind)), 201)
		}
		must(t, in.do(t, "POST", "/v1/jobs", "", `{"kind":"m.later","queue":"q1","run_at":"2999-01-01T00:00:00Z"}`), 201)
		// The first four (in insert order) are claimed; m.wait stays pending.
		claimed := must(t, out.do(t, "POST", "/v1/queues/q1/claim", "", `{"worker_id":"w","max":4}`), 200).jobs()
		if len(claimed) != 4 {
			t.Fatalf("claimed %d jobs, want 4", len(claimed))
		}
		for _, j := range claimed {
			path := fmt.Sprintf("/v1/jobs/%d/", id(j))
			switch j["kind"] {
			case "m.done":
				must(t, out.do(t, "POST", path+"complete", "", `{"worker_id":"w"}`), 200)
			case "m.bad":
				must(t, out.do(t, "POST", path+"fail", "", `{"worker_id":"w","error":{"type":"Bad","message":"no"},"retryable":false}`), 200)
			case "m.retry":
				must(t, out.do(t, "POST", path+"fail", "", `{"worker_id":"w","error":{"type":"Busy","message":"later"},"retry_in_seconds":3600}`), 200)
			}
		}
		a, b := clusterLines(t, in), clusterLines(t, out)
		if !slices.Equal(a, b) {
			t.Fatalf("the two servers disagree:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		for _, want := range []string{
			`skiplock_database_up 1`,
			`skiplock_jobs_finished_recent{kind="m.done",queue="q1",state="completed"} 2`,
			`skiplock_jobs_finished_recent{kind="m.bad",queue="q1",state="failed"} 1`,
			`skiplock_jobs_retry_waiting{kind="m.retry",queue="q1"} 1`,
			`skiplock_jobs{kind="m.retry",queue="q1",state="scheduled"} 1`,
			`skiplock_jobs{kind="m.wait",queue="q1",state="pending"} 1`,
			`skiplock_jobs{kind="m.later",queue="q1",state="scheduled"} 1`,
			`skiplock_queue_jobs{queue="q1",state="running"} 0`,
			`skiplock_queue_jobs{queue="q1",state="scheduled"} 2`,
			`skiplock_queue_jobs{queue="q1",state="pending"} 1`,
			`skiplock_jobs_rescued_total{outcome="requeued"} 0`,
		} {
			if !slices.Contains(a, want) {
				t.Errorf("metrics lack %s; have:\n%s", want, strings.Join(a, "\n"))
			}
		}
	})
}
