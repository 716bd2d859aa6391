package pgdriver_test

import (
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestInfiniteTimesReadFinite: 'infinity' and '-infinity' read as the last
// and first instants PostgreSQL stores, in both protocols' formats; those
// instants are ones PostgreSQL takes back, in the same order with every
// time; NULL reads as the zero time.
func TestInfiniteTimesReadFinite(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	cases := []struct {
		sql  string
		want time.Time
	}{
		{"'infinity'", pgdriver.MaxTime},
		{"'-infinity'", pgdriver.MinTime},
		{"'294276-12-31 23:59:59.999999+00'", pgdriver.MaxTime},
		{"'4713-11-24 00:00:00+00 BC'", pgdriver.MinTime},
		{"'2024-02-29 12:00:00+05'", time.Date(2024, 2, 29, 7, 0, 0, 0, time.UTC)},
		{"NULL", time.Time{}},
	}
	for _, c := range cases {
		// Binary, and text as the simple protocol answers.
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
			var got time.Time
			stmt := "SELECT " + c.sql + "::timestamptz"
			if err := d.Pool().QueryRow(ctx, stmt, mode).Scan(pgdriver.ScanTime(&got)); err != nil {
				t.Fatalf("%s (%v): %v", stmt, mode, err)
			}
			if !got.Equal(c.want) || got.Location() != time.UTC {
				t.Errorf("%s (%v) reads as %v, want %v in UTC", stmt, mode, got, c.want)
			}
		}
	}
	var below, above, exactMax, exactMin bool
	err := d.Pool().QueryRow(ctx, `SELECT $1::timestamptz < 'infinity', $2::timestamptz > '-infinity',
		$1::timestamptz = '294276-12-31 23:59:59.999999+00', $2::timestamptz = '4713-11-24 00:00:00+00 BC'`,
		pgdriver.MaxTime, pgdriver.MinTime).Scan(&below, &above, &exactMax, &exactMin)
	if err != nil || !below || !above || !exactMax || !exactMin {
		t.Errorf("written back, the bounds compare %v %v %v %v (%v); want them stored as the extreme finite times",
			below, above, exactMax, exactMin, err)
	}
}

// TestFromSecsHeld: seconds no Duration holds (an age against '-infinity',
// a period of 'Infinity') are held at the Duration's bounds.
func TestFromSecsHeld(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]time.Duration{
		1.5: 1500 * time.Millisecond, math.Inf(1): math.MaxInt64, math.Inf(-1): math.MinInt64,
		1e300: math.MaxInt64, -1e300: math.MinInt64, 2.2e11: math.MaxInt64, math.NaN(): 0,
	} {
		if got := pgdriver.FromSecs(in); got != want {
			t.Errorf("FromSecs(%v) = %v, want %v", in, got, want)
		}
	}
}
