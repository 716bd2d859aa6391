package sqlitedriver

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// storedMicros scans a count of microseconds: a time (since the Unix epoch)
// or an age. Skiplock writes integers, but a SQLite column takes a value of
// any type, and a row written by other means must still read: a real is
// held within int64 ('Infinity' included), a text is read as the number it
// spells, and a text that spells none (or a blob) is the latest time, as
// SQLite orders every text and blob after every number. NULL is invalid.
type storedMicros struct {
	us    int64
	valid bool
}

func (m *storedMicros) Scan(src any) error {
	m.us, m.valid = 0, src != nil
	switch v := src.(type) {
	case int64:
		m.us = v
	case float64:
		m.us = clampMicros(v)
	case string:
		m.us = parseMicros(v)
	case []byte:
		m.us = parseMicros(string(v))
	case nil:
	default:
		m.us = math.MaxInt64
	}
	return nil
}

func parseMicros(s string) int64 {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return clampMicros(f)
	}
	return math.MaxInt64
}

// clampMicros answers f within int64; NaN is 0.
func clampMicros(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// time answers the count as a time in UTC; the Unix epoch when NULL.
func (m storedMicros) time() time.Time { return fromMicros(m.us) }

// ptr answers the count as a time, or nil when NULL.
func (m storedMicros) ptr() *time.Time {
	if !m.valid {
		return nil
	}
	t := fromMicros(m.us)
	return &t
}

// duration answers the count as a Duration, held within what one holds
// (±292 years, where microseconds reach ±292,000).
func (m storedMicros) duration() time.Duration {
	switch {
	case m.us > math.MaxInt64/int64(time.Microsecond):
		return math.MaxInt64
	case m.us < math.MinInt64/int64(time.Microsecond):
		return math.MinInt64
	}
	return time.Duration(m.us) * time.Microsecond
}
