package outcome

import (
	"testing"

	"github.com/skiplock/skiplock/driver"
)

func TestDecide(t *testing.T) {
	left := driver.HeldState{Attempt: 2, MaxRetries: 3}
	last := driver.HeldState{Attempt: 4, MaxRetries: 3}
	asked := func(h driver.HeldState, cancel, pause bool) driver.HeldState {
		h.CancelRequested, h.PauseRequested = cancel, pause
		return h
	}
	for _, c := range []struct {
		name string
		r    Report
		h    driver.HeldState
		want Decision
	}{
		{"retry, retries left", Report{Retry: true}, left, Decision{EndRetry, true}},
		{"retry, the last attempt", Report{Retry: true}, last, Decision{EndFail, false}},
		{"permanent", Report{}, left, Decision{EndFail, false}},
		{"snooze", Report{Snooze: true}, left, Decision{EndSnooze, false}},
		{"snooze, the last attempt", Report{Snooze: true}, last, Decision{EndSnooze, false}},
		{"retry, asked to cancel", Report{Retry: true}, asked(left, true, false), Decision{EndCancel, true}},
		{"retry, asked to cancel, the last attempt", Report{Retry: true}, asked(last, true, false), Decision{EndCancel, false}},
		{"permanent, asked to cancel", Report{}, asked(left, true, false), Decision{EndCancel, false}},
		{"snooze, asked to cancel", Report{Snooze: true}, asked(left, true, false), Decision{EndCancel, false}},
		{"retry, asked to pause", Report{Retry: true}, asked(left, false, true), Decision{EndPause, true}},
		{"permanent, asked to pause", Report{}, asked(last, false, true), Decision{EndPause, false}},
		{"snooze, asked to pause", Report{Snooze: true}, asked(left, false, true), Decision{EndPause, false}},
		{"asked to pause and to cancel", Report{Retry: true}, asked(left, true, true), Decision{EndCancel, true}},
	} {
		if got := Decide(c.r, c.h); got != c.want {
			t.Errorf("%s: Decide = %+v, want %+v", c.name, got, c.want)
		}
	}
}
