package sqlitedriver

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ArchivePrepare has nothing to do: the SQLite archive is one plain table.
func (e executor) ArchivePrepare(ctx context.Context, until time.Time) error { return nil }

// UniqueKeyPrune deletes a batch of expired window keys of jobs no longer live.
func (e executor) UniqueKeyPrune(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := e.wexec(ctx, "UniqueKeyPrune", sql.Named("before", before.UnixMicro()), sql.Named("limit", limit))
	if err != nil {
		return 0, fmt.Errorf("prune unique keys: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
