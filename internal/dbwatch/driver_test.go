package dbwatch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/dbwatch"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
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

// TestReadsAreNotCountedAsWrites: a statement marked //skiplock:read is
// classified but its success is no write; a write's success is.
func TestReadsAreNotCountedAsWrites(t *testing.T) {
	t.Parallel()
	tr := dbwatch.NewTracker()
	d := dbwatch.Wrap(sqlitetest.New(t), tr)
	ctx := t.Context()
	if _, err := d.JobStats(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.JobList(ctx, driver.ListParams{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if st := tr.Status(); !st.At.IsZero() {
		t.Fatalf("reads were counted as writes: %+v", st)
	}
	if _, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "k", Queue: "q", MaxRetries: 1, Payload: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if st := tr.Status(); st.At.IsZero() || st.Err != nil {
		t.Fatalf("a write's success was not counted: %+v", st)
	}
}
