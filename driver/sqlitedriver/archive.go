package sqlitedriver

import (
	"context"
	"time"
)

// ArchivePrepare has nothing to do: the SQLite archive is one plain table.
func (e executor) ArchivePrepare(ctx context.Context, until time.Time) error { return nil }

// HotTableVacuum is a no-op: SQLite reuses the pages of deleted rows.
func (e executor) HotTableVacuum(ctx context.Context, deadRows int64) (bool, error) {
	return false, nil
}
