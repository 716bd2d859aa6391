package sqlitedriver

import (
	"context"
	"time"
)

// ArchivePrepare has nothing to do: the SQLite archive is one plain table.
func (e executor) ArchivePrepare(ctx context.Context, until time.Time) error { return nil }
