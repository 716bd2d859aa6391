package contract

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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

// backoffKeys lists, per type, the keys a backoff may carry.
var backoffKeys = map[string][]string{
	BackoffExponential: {"type", "base", "factor", "max", "jitter"},
	BackoffFixed:       {"type", "delay", "jitter"},
}

// backoff reads a backoff object. Only keys that its type uses are allowed,
// so that `{type: fixed, base: 10s}` is reported instead of ignored.
func (p *problems) backoff(v any, path string) (Backoff, bool) {
	obj, ok := p.object(v, path)
	if !ok {
		return Backoff{}, false
	}
	typ, given := obj.get("type")
	if !given {
		p.add(join(path, "type"), "required: exponential or fixed")
		return Backoff{}, false
	}
	t, ok := p.str(typ, join(path, "type"))
	if !ok {
		return Backoff{}, false
	}
	allowed, known := backoffKeys[t]
	if !known {
		p.add(join(path, "type"), "must be exponential or fixed, got %q", t)
		return Backoff{}, false
	}
	before := len(p.errs)
	b := Backoff{Type: t}
	for _, key := range obj.keys {
		if !slices.Contains(allowed, key) {
			p.add(join(path, key), "unknown field for %s backoff (allowed: %s)", t, strings.Join(allowed, ", "))
		}
	}
	if t == BackoffFixed {
		b.Delay, _ = p.requiredPositive(obj, "delay", path)
	} else {
		p.exponential(obj, path, &b)
	}
	if j, given := obj.get("jitter"); given {
		if f, ok := p.number(j, join(path, "jitter")); ok && (f < 0 || f > 1) {
			p.add(join(path, "jitter"), "must be between 0 and 1, got %v", j)
		} else {
			b.Jitter = f
		}
	}
	return b, len(p.errs) == before
}

func (p *problems) exponential(obj *object, path string, b *Backoff) {
	b.Base, _ = p.requiredPositive(obj, "base", path)
	if f, given := obj.get("factor"); !given {
		p.add(join(path, "factor"), "required for exponential backoff")
	} else if n, ok := p.number(f, join(path, "factor")); ok && n < 1 {
		p.add(join(path, "factor"), "must be >= 1, got %v", f)
	} else {
		b.Factor = n
	}
	if m, given := obj.get("max"); given {
		if d, ok := p.positive(m, join(path, "max")); ok && b.Base > 0 && d < b.Base {
			p.add(join(path, "max"), "must be >= base (%s), got %s", b.Base, d)
		} else {
			b.Max = d
		}
	}
}

func (p *problems) requiredPositive(obj *object, key, path string) (time.Duration, bool) {
	v, given := obj.get(key)
	if !given {
		p.add(join(path, key), "required")
		return 0, false
	}
	return p.positive(v, join(path, key))
}
