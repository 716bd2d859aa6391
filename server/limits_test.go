package server_test

import (
	"strings"
	"testing"
)

// A limit in an error message reads as whole seconds, with a duration a
// person can take in, never float notation such as 3.16224e+08.
func TestLimitMessagesReadWell(t *testing.T) {
	t.Parallel()
	b := setup(t, databases[len(databases)-1], nil)
	cases := []struct{ path, body, want string }{
		{"/v1/jobs", `{"kind":"x","delay_seconds":4000000000}`, "must be between 0 and 316224000 seconds (3660 days), got 4000000000"},
		{"/v1/queues/q/claim", `{"worker_id":"w","lease_seconds":1000000}`, "must be between 0 and 604800 seconds (7 days), got 1000000"},
		{"/v1/queues/q/claim", `{"worker_id":"w","lease_seconds":0.5}`, "must be at least 1, got 0.5"},
	}
	for _, c := range cases {
		a := b.do(t, "POST", c.path, "", c.body)
		if a.status != 400 || !strings.Contains(string(a.raw), c.want) || strings.Contains(string(a.raw), "e+") {
			t.Errorf("%s %s: %d %s; want 400 with %q", c.path, c.body, a.status, a.raw, c.want)
		}
	}
}
