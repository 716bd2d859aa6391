package pgdriver_test

import (
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/drivertest"
	"github.com/skiplock/skiplock/internal/pgtest"
)

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Driver {
		d, _ := pgtest.Schema(t)
		return d
	})
}
