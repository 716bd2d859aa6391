package sqlitedriver

import (
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/skiplock/skiplock/driver"
)

// ClassifyError answers a *driver.RefusedError for a write SQLite refused:
// SQLITE_READONLY (a read-only file, query_only) is driver.ErrReadOnly,
// SQLITE_FULL (no space, or max_page_count reached) driver.ErrDiskFull;
// other errors are answered as they are.
func (d *Driver) ClassifyError(err error) error { return classifyError(err) }

func classifyError(err error) error {
	var se *sqlite.Error
	var refused *driver.RefusedError
	if err == nil || errors.As(err, &refused) || !errors.As(err, &se) {
		return err
	}
	// The low byte is the primary code under the extended ones
	// (SQLITE_READONLY_DBMOVED, …).
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_READONLY:
		return &driver.RefusedError{Kind: driver.ErrReadOnly, Err: err}
	case sqlite3.SQLITE_FULL:
		return &driver.RefusedError{Kind: driver.ErrDiskFull, Err: err}
	}
	return err
}

var _ driver.ErrorClassifier = (*Driver)(nil)
