package pgdriver

import (
	"testing"
	"time"
)

// The live jobs a rebuild compares the table with are the most seen in
// this window and the last, not the count of the moment.
func TestPeakLiveKeepsTheWindowsMost(t *testing.T) {
	u := &hotTableUpkeep{}
	if got := u.peakLive(100); got != 100 {
		t.Fatalf("first look: %d", got)
	}
	if got := u.peakLive(10); got != 100 {
		t.Fatalf("a swing down in the same window: %d, want 100", got)
	}
	u.windowStart = u.windowStart.Add(-peakWindow) // the window has passed
	if got := u.peakLive(5); got != 100 {
		t.Fatalf("the next window: %d, want the last one's 100", got)
	}
	u.windowStart = u.windowStart.Add(-peakWindow)
	if got := u.peakLive(5); got != 5 {
		t.Fatalf("two windows on: %d, want 5", got)
	}
	u.windowStart = time.Now().Add(-3 * peakWindow) // no look for a while
	if got := u.peakLive(7); got != 7 {
		t.Fatalf("after a gap: %d, want 7", got)
	}
}
