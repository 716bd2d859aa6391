// Package sqlitetest gives each test its own migrated SQLite file in a
// temporary directory, closed and removed afterwards.
package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver/sqlitedriver"
)

// New answers a migrated driver on a new file in t's temporary directory.
func New(t testing.TB) *sqlitedriver.Driver {
	t.Helper()
	return Open(t, filepath.Join(t.TempDir(), "skiplock.db"))
}

// Open answers a migrated driver on the file at path (created when
// missing), closed at the end of the test.
func Open(t testing.TB, path string) *sqlitedriver.Driver {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := sqlitedriver.Open(ctx, path)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, err := d.Migrator().Up(ctx, 0); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return d
}
