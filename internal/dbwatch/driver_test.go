package dbwatch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/dbwatch"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestWatchedTransactionHasNoHotTableUpkeep: the watch forwards every
// store, the hot table's upkeep too; in a transaction, whose executor has
// none, the call answers ErrUnsupported.
func TestWatchedTransactionHasNoHotTableUpkeep(t *testing.T) {
	t.Parallel()
	pg, _ := pgtest.Schema(t)
	d := dbwatch.Wrap(pg, dbwatch.NewTracker())
	tx, err := d.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	hot, ok := tx.(driver.HotTableStore)
	if !ok {
		t.Fatal("the watched transaction does not forward the hot table's upkeep")
	}
	if _, err := hot.HotTableSpill(t.Context(), false, driver.SpillLimits{}); !errors.Is(err, driver.ErrUnsupported) {
		t.Fatalf("HotTableSpill in a transaction: %v, want ErrUnsupported", err)
	}
	if _, err := d.HotTableSpill(t.Context(), false, driver.SpillLimits{}); err != nil {
		t.Fatalf("HotTableSpill on the driver: %v", err)
	}
}
