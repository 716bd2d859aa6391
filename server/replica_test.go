package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestStatsReplicaLag proves that GET /v1/stats answers the lag of the
// replica its counts come from, and that every dashboard page says so.
func TestStatsReplicaLag(t *testing.T) {
	drv, _ := pgtest.Replica(t)
	b := setupOn(t, drv, nil)
	st := must(t, b.do(t, "GET", "/v1/stats", "", nil), 200).body
	if lag, ok := st["replica_lag_seconds"].(float64); !ok || lag < 0 {
		t.Fatalf("stats: replica_lag_seconds %v, want a number of seconds", st["replica_lag_seconds"])
	}
	for _, page := range []string{"/", "/jobs", "/queues"} {
		res, err := http.Get(b.ts.URL + page)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), `id="replica"`) ||
			!strings.Contains(string(body), "behind the primary") {
			t.Fatalf("GET %s: %d, the page does not show the replica's lag:\n%s", page, res.StatusCode, body)
		}
	}
}

// TestStatsWithoutReplica proves that replica_lag_seconds is null, and no
// page mentions a replica, when the server reads none.
func TestStatsWithoutReplica(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		st := must(t, b.do(t, "GET", "/v1/stats", "", nil), 200).body
		if lag, ok := st["replica_lag_seconds"]; !ok || lag != nil {
			t.Fatalf("stats: replica_lag_seconds %v (present %v), want null", lag, ok)
		}
		res, err := http.Get(b.ts.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(body), `id="replica"`) {
			t.Fatal("the overview mentions a replica the server does not read")
		}
	})
}
