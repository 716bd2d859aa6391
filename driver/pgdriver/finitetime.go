package pgdriver

import (
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// A timestamptz may hold 'infinity' or '-infinity' (written by other means
// than Skiplock), which no time.Time holds and pgx refuses to scan into
// one. Every timestamptz is read through finite, which answers them as the
// last and the first instants PostgreSQL stores: they keep their order
// with every finite time (an infinity ties only with that very instant),
// and a time read back and written again is still one PostgreSQL takes.
var (
	pgMaxTime = time.Date(294276, 12, 31, 23, 59, 59, 999999000, time.UTC)
	pgMinTime = time.Date(-4712, 11, 24, 0, 0, 0, 0, time.UTC) // 4713-11-24 BC
)

// finite answers v in UTC, its infinities as pgMaxTime and pgMinTime; the
// zero time for NULL.
func finite(v pgtype.Timestamptz) time.Time {
	switch {
	case !v.Valid:
		return time.Time{}
	case v.InfinityModifier == pgtype.Infinity:
		return pgMaxTime
	case v.InfinityModifier == pgtype.NegativeInfinity:
		return pgMinTime
	}
	return v.Time.UTC()
}

// finiteTime is a scan target for a timestamptz into a time.Time, through
// finite: scanTime(&t). It is a conversion of the pointer, so a scan
// allocates nothing more than into &t.
type finiteTime time.Time

func scanTime(t *time.Time) *finiteTime { return (*finiteTime)(t) }

func (t *finiteTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	*t = finiteTime(finite(v))
	return nil
}

// fromSecs answers seconds that PostgreSQL computed or stored (an age, a
// schedule's period) as a time.Duration, held within what a Duration holds
// (±292 years): the age of a time far in the past or at '-infinity', or a
// period of 'Infinity', is the longest Duration; NaN is none.
func fromSecs(s float64) time.Duration {
	switch {
	case math.IsNaN(s):
		return 0
	case s >= math.MaxInt64/float64(time.Second):
		return math.MaxInt64
	case s <= math.MinInt64/float64(time.Second):
		return math.MinInt64
	}
	return time.Duration(s * float64(time.Second))
}
