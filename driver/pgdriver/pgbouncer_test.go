package pgdriver_test

import (
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/drivertest"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestConformanceThroughPgBouncer runs the conformance suite through
// PgBouncer in transaction mode (SKIPLOCK_TEST_PGBOUNCER_URL, which
// scripts/test sets): every statement goes unprepared over whichever server
// connection the pooler lends, LISTEN over a direct connection.
func TestConformanceThroughPgBouncer(t *testing.T) {
	pgtest.PgBouncerURL(t)
	drivertest.Run(t, func(t *testing.T) driver.Driver {
		d, _ := pgtest.PooledSchema(t, pgdriver.Options{})
		return d
	}, func(t *testing.T, d driver.Driver, id int64) { pgtest.SetNextJobID(t, d.(*pgdriver.Driver), id) })
}
