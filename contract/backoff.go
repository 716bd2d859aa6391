package contract

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff types.
const (
	BackoffExponential = "exponential"
	BackoffFixed       = "fixed"
)

// Backoff is the wait between a failed attempt and the next one.
//
// Exponential waits Base × Factor^retry, capped at Max when Max > 0; fixed
// waits Delay. Either is then multiplied by a random factor in
// [1-Jitter, 1+Jitter] so that jobs that failed together do not retry
// together. A zero Backoff behaves as DefaultBackoff.
type Backoff struct {
	Type   string // BackoffExponential or BackoffFixed
	Base   time.Duration
	Factor float64
	Max    time.Duration
	Jitter float64
	Delay  time.Duration
}

// DefaultBackoff is 60 s × 3^retry with ±20 % jitter, at most 24 h: about 1,
// 3 and 9 minutes for the first three retries.
var DefaultBackoff = Backoff{
	Type:   BackoffExponential,
	Base:   60 * time.Second,
	Factor: 3,
	Max:    24 * time.Hour,
	Jitter: 0.2,
}

// Next returns the wait before retry number retry (0 for the first retry).
func (b Backoff) Next(retry int) time.Duration {
	if b.Type == "" {
		b = DefaultBackoff
	}
	retry = max(retry, 0)
	var d float64
	switch b.Type {
	case BackoffFixed:
		d = float64(b.Delay)
	default:
		d = float64(b.Base) * math.Pow(b.Factor, float64(retry))
		if b.Max > 0 {
			d = math.Min(d, float64(b.Max))
		}
	}
	if b.Jitter > 0 {
		d *= 1 - b.Jitter + 2*b.Jitter*rand.Float64()
	}
	return clampDuration(d)
}

// clampDuration converts nanoseconds to a Duration without overflowing:
// Factor^retry grows past the range of int64 after a few dozen retries.
func clampDuration(ns float64) time.Duration {
	switch {
	case math.IsNaN(ns) || ns <= 0:
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(ns)
}
