// Package sqlitetest gives each test its own migrated SQLite file in a
// temporary directory, closed and removed afterwards.
package sqlitetest

import (
	"context"
	"fmt"
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

// SetReadOnly makes d's writes fail with SQLITE_READONLY (PRAGMA
// query_only on its one writer connection), or lets them through again.
// A test cannot make the file read-only instead: it may run as root.
func SetReadOnly(t testing.TB, d *sqlitedriver.Driver, on bool) {
	t.Helper()
	if _, err := d.DB().ExecContext(context.Background(), fmt.Sprintf("PRAGMA query_only = %t", on)); err != nil {
		t.Fatalf("query_only %t: %v", on, err)
	}
}

// SetMaxPages caps d's file at n pages (PRAGMA max_page_count): a write
// that needs more fails with SQLITE_FULL, as on a full disk. n <= 0 caps
// it at its size now. It answers the cap.
func SetMaxPages(t testing.TB, d *sqlitedriver.Driver, n int64) int64 {
	t.Helper()
	ctx := context.Background()
	if n <= 0 {
		if err := d.DB().QueryRowContext(ctx, "PRAGMA page_count").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	var got int64
	if err := d.DB().QueryRowContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n)).Scan(&got); err != nil {
		t.Fatalf("max_page_count %d: %v", n, err)
	}
	return got
}
