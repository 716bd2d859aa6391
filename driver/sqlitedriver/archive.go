package sqlitedriver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// ArchivePrepare has nothing to do: the SQLite archive is one plain table.
func (e executor) ArchivePrepare(ctx context.Context, until time.Time) error { return nil }

// HotTableVacuum is a no-op: SQLite reuses the pages of deleted rows.
func (e executor) HotTableVacuum(ctx context.Context, deadRows int64) (bool, error) {
	return false, nil
}

// HotTableRebuild is a no-op: SQLite reuses the pages of deleted rows, and
// has no snapshot that could hold them back.
func (e executor) HotTableRebuild(ctx context.Context, limits driver.RebuildLimits) (driver.Rebuild, error) {
	return driver.Rebuild{}, nil
}

// HotTableSpill is a no-op: nothing on SQLite holds a deleted row's space.
func (e executor) HotTableSpill(ctx context.Context, open bool, limits driver.SpillLimits) (driver.Spill, error) {
	return driver.Spill{}, nil
}

// UniqueKeyPrune deletes a batch of expired window keys of jobs no longer live.
func (e executor) UniqueKeyPrune(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := e.wexec(ctx, "UniqueKeyPrune", sql.Named("before", before.UnixMicro()), sql.Named("limit", limit))
	if err != nil {
		return 0, fmt.Errorf("prune unique keys: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
