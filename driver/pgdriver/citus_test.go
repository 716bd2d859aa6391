package pgdriver_test

import (
	"errors"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/drivertest"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestCitusConformance runs the conformance suite on a schema distributed on
// Citus (SKIPLOCK_TEST_CITUS_URL, a coordinator with workers).
func TestCitusConformance(t *testing.T) {
	pgtest.CitusURL(t)
	drivertest.Run(t, func(t *testing.T) driver.Driver {
		d, _ := pgtest.CitusSchema(t)
		return d
	}, func(t *testing.T, d driver.Driver, id int64) { pgtest.SetNextJobID(t, d.(*pgdriver.Driver), id) })
}

// TestDistributeRefusesWithoutCitus: on a PostgreSQL without the extension
// the distribution step says what is missing and changes nothing.
func TestDistributeRefusesWithoutCitus(t *testing.T) {
	d, _ := pgtest.Schema(t)
	if _, err := d.Distribute(t.Context(), pgdriver.CitusOptions{}); !errors.Is(err, pgdriver.ErrNoCitus) {
		t.Fatalf("Distribute without citus: %v, want ErrNoCitus", err)
	}
	if _, err := d.Distribute(t.Context(), pgdriver.CitusOptions{Shards: -1}); err == nil {
		t.Fatal("Distribute with -1 shards: no error")
	}
	on, err := d.OnCitus(t.Context())
	if err != nil || on {
		t.Fatalf("OnCitus = %v, %v; want false", on, err)
	}
}
