package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
)

// TestClaimAndHeartbeatTakeTheKindsLease: a claim or heartbeat without
// lease_seconds gives each job its kind's contract lease; lease_seconds wins.
func TestClaimAndHeartbeatTakeTheKindsLease(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		set, err := contract.Parse([]byte("version: 1\nkinds:\n  short: {lease: 30s}\n  long: {lease: 10m}\n"))
		if err != nil {
			t.Fatal(err)
		}
		b := setupClient(t, db.open(t), &skiplock.Config{Contracts: set}, nil)
		want := map[string]time.Duration{"short": 30 * time.Second, "long": 10 * time.Minute}
		for kind := range want {
			must(t, b.do(t, "POST", "/v1/jobs", "", fmt.Sprintf(`{"kind":%q}`, kind)), 201)
		}
		claimed := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w","max":5}`), 200).jobs()
		if len(claimed) != 2 {
			t.Fatalf("claimed %v", claimed)
		}
		for _, j := range claimed {
			kind := j["kind"].(string)
			if l := stamp(t, j["lease_until"]).Sub(stamp(t, j["started_at"])); (l - want[kind]).Abs() > 5*time.Second {
				t.Errorf("claim: %s job leased for %s, want %s", kind, l, want[kind])
			}
			path := fmt.Sprintf("/v1/jobs/%d/heartbeat", id(j))
			for body, lease := range map[string]time.Duration{`{"worker_id":"w"}`: want[kind],
				`{"worker_id":"w","attempt":1}`: want[kind], `{"worker_id":"w","lease_seconds":3600}`: time.Hour} {
				hb := must(t, b.do(t, "POST", path, "", body), 200).body
				if l := time.Until(stamp(t, hb["lease_until"])); (l - lease).Abs() > 5*time.Second {
					t.Errorf("heartbeat %s of %s: lease %s, want %s", body, kind, l, lease)
				}
			}
		}
		must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"short"}`), 201)
		j := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w","lease_seconds":3600}`), 200).jobs()
		if len(j) != 1 || (stamp(t, j[0]["lease_until"]).Sub(stamp(t, j[0]["started_at"]))-time.Hour).Abs() > 5*time.Second {
			t.Fatalf("claim with lease_seconds: %v", j)
		}
	})
}

func stamp(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return at
}
