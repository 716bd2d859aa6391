// Package testwait polls a condition in tests that wait for background work
// (a flush, a vacuum, a wake-up) without a fixed sleep.
package testwait

import (
	"testing"
	"time"
)

// Until polls cond until it holds, failing t with what after within. It
// looks again after 10 ms, then less and less often up to every 200 ms, so
// that a cheap condition is seen at once and a costly one (a statement) does
// not run back to back.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	wait := 10 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(wait)
		wait = min(2*wait, 200*time.Millisecond)
	}
}
