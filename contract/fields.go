package contract

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Readers of one value of a contract file. Each reports a problem at path
// and returns ok=false, so that the caller keeps going and every problem
// of the file is reported in one run.

func (p *problems) object(v any, path string) (*object, bool) {
	if v == nil {
		// `file:` with nothing under it declares a kind with all defaults.
		return newObject(), true
	}
	obj, ok := v.(*object)
	if !ok {
		p.add(path, "expected object, got %s", typeName(v))
	}
	return obj, ok
}

func (p *problems) list(v any, path string) ([]any, bool) {
	l, ok := v.([]any)
	if !ok {
		p.add(path, "expected array, got %s", typeName(v))
	}
	return l, ok
}

func (p *problems) str(v any, path string) (string, bool) {
	s, ok := v.(string)
	if !ok {
		p.add(path, "expected string, got %s", typeName(v))
	}
	return s, ok
}

func (p *problems) boolean(v any, path string) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		p.add(path, "expected boolean, got %s", typeName(v))
	}
	return b, ok
}

// name reads a kind, queue or op name (see validName).
func (p *problems) name(v any, path string) (string, bool) {
	s, ok := p.str(v, path)
	if ok && !validName(s) {
		p.add(path, "invalid name %q: use 1 to %d letters, digits, '_', '.' or '-'", s, maxNameLen)
		return "", false
	}
	return s, ok
}

const maxNameLen = 128

// validName keeps names free of ':' and spaces: a kind name starts every
// derived idempotency key, whose parts are separated by ':'.
func validName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for _, r := range s {
		if !(isAlnum(r) || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

func (p *problems) number(v any, path string) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		p.add(path, "expected number, got %s", typeName(v))
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		p.add(path, "number %s is out of range", n)
		return 0, false
	}
	return f, true
}

// integer reads a whole number in [lo, hi].
func (p *problems) integer(v any, path string, lo, hi int) (int, bool) {
	f, ok := p.number(v, path)
	if !ok {
		return 0, false
	}
	if f != math.Trunc(f) {
		p.add(path, "expected integer, got %v", v)
		return 0, false
	}
	switch {
	case hi == math.MaxInt32 && f < float64(lo):
		p.add(path, "must be >= %d, got %v", lo, v)
	case hi == math.MaxInt32 && f > float64(hi):
		p.add(path, "must be <= %d, got %v", hi, v)
	case f < float64(lo) || f > float64(hi):
		p.add(path, "must be between %d and %d, got %v", lo, hi, v)
	default:
		return int(f), true
	}
	return 0, false
}

// duration reads a non-negative Go duration string ("90s", "5m", "1h30m").
func (p *problems) duration(v any, path string) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		p.add(path, "expected duration string such as \"30s\" or \"5m\", got %s", typeName(v))
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		p.add(path, "invalid duration %q (Go syntax: 300ms, 30s, 5m, 1h30m)", s)
		return 0, false
	}
	if d < 0 {
		p.add(path, "must not be negative, got %s", s)
		return 0, false
	}
	return d, true
}

// positive reads a duration that must be greater than zero.
func (p *problems) positive(v any, path string) (time.Duration, bool) {
	d, ok := p.duration(v, path)
	if ok && d == 0 {
		p.add(path, "must be greater than 0")
		return 0, false
	}
	return d, ok
}

// setting reads one key that defaults and kinds share into s. It reports
// false when key is not such a setting.
func (p *problems) setting(s *settings, key string, v any, path string) bool {
	switch key {
	case "queue":
		if q, ok := p.name(v, path); ok {
			s.queue = q
		}
	case "priority":
		if n, ok := p.integer(v, path, MinPriority, MaxPriority); ok {
			s.priority = n
		}
	case "max_retries":
		if n, ok := p.integer(v, path, 0, math.MaxInt32); ok {
			s.maxRetries = n
		}
	case "lease":
		if d, ok := p.positive(v, path); ok {
			s.lease = d
		}
	case "timeout":
		if d, ok := p.duration(v, path); ok {
			s.timeout = d
		}
	case "backoff":
		if b, ok := p.backoff(v, path); ok {
			s.backoff = b
		}
	default:
		return false
	}
	return true
}
