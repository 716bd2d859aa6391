package sqlitedriver_test

import (
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/drivertest"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
		func(t *testing.T, d driver.Driver, id int64) {
			sqlitetest.SetNextJobID(t, d.(*sqlitedriver.Driver), id)
		})
}
