package contract

import (
	"math"
	"testing"
	"time"
)

func TestBackoffNextWithoutJitter(t *testing.T) {
	exp := Backoff{Type: BackoffExponential, Base: time.Minute, Factor: 3, Max: time.Hour}
	tests := []struct {
		b     Backoff
		retry int
		want  time.Duration
	}{
		{exp, 0, time.Minute},
		{exp, 1, 3 * time.Minute},
		{exp, 2, 9 * time.Minute},
		{exp, 3, 27 * time.Minute},
		{exp, 4, time.Hour}, // 81m, capped
		{exp, -1, time.Minute},
		{Backoff{Type: BackoffExponential, Base: time.Second, Factor: 1}, 50, time.Second},
		{Backoff{Type: BackoffExponential, Base: time.Second, Factor: 10}, 1000, math.MaxInt64}, // no cap, no overflow
		{Backoff{Type: BackoffFixed, Delay: 30 * time.Second}, 0, 30 * time.Second},
		{Backoff{Type: BackoffFixed, Delay: 30 * time.Second}, 9, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := tt.b.Next(tt.retry); got != tt.want {
			t.Errorf("%+v.Next(%d) = %v, want %v", tt.b, tt.retry, got, tt.want)
		}
	}
}

func TestBackoffJitterStaysInRange(t *testing.T) {
	tests := []struct {
		b      Backoff
		retry  int
		lo, hi time.Duration
	}{
		// The seeds' schedule: 60 s × 3^retry × uniform(0.8, 1.2).
		{DefaultBackoff, 0, 48 * time.Second, 72 * time.Second},
		{DefaultBackoff, 2, 432 * time.Second, 648 * time.Second},
		{DefaultBackoff, 20, time.Duration(0.8 * float64(24*time.Hour)), time.Duration(1.2 * float64(24*time.Hour))},
		{Backoff{}, 1, 144 * time.Second, 216 * time.Second}, // zero Backoff = DefaultBackoff
		{Backoff{Type: BackoffFixed, Delay: 10 * time.Second, Jitter: 0.5}, 3, 5 * time.Second, 15 * time.Second},
	}
	for _, tt := range tests {
		seen := map[time.Duration]bool{}
		for range 500 {
			d := tt.b.Next(tt.retry)
			if d < tt.lo || d > tt.hi {
				t.Fatalf("%+v.Next(%d) = %v, outside [%v, %v]", tt.b, tt.retry, d, tt.lo, tt.hi)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("%+v.Next(%d): only %d distinct waits in 500, jitter not applied", tt.b, tt.retry, len(seen))
		}
	}
}
