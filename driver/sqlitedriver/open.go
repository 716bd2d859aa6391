package sqlitedriver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrUnusable marks a file that cannot be used as given: a missing
// directory, a directory, a read-only file, a file that is not a SQLite or
// not a Skiplock database.
var ErrUnusable = errors.New("unusable database file")

// FileError says what is wrong with a database file; it wraps ErrUnusable.
type FileError struct {
	Path    string
	Problem string
	Err     error
}

func (e *FileError) Error() string { return "database " + e.Path + ": " + e.Problem }

func (e *FileError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrUnusable}
	}
	return []error{ErrUnusable, e.Err}
}

// BusyTimeout is how long a write waits for another process's write.
const BusyTimeout = 10_000 // ms

// Open opens the database file at path, creating it when missing, in WAL
// mode. It does not migrate (see Migrator, MigrateNew).
func Open(ctx context.Context, path string) (*Driver, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &FileError{Path: path, Problem: err.Error(), Err: err}
	}
	if err := checkPath(abs); err != nil {
		return nil, err
	}
	writer, err := sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		return nil, &FileError{Path: abs, Problem: err.Error(), Err: err}
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := checkWritable(ctx, writer); err != nil {
		writer.Close()
		return nil, fileError(abs, err)
	}
	readers, err := sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		writer.Close()
		return nil, &FileError{Path: abs, Problem: err.Error(), Err: err}
	}
	n := max(4, runtime.GOMAXPROCS(0))
	readers.SetMaxOpenConns(n)
	readers.SetMaxIdleConns(n)
	d := &Driver{path: abs, writer: writer, readers: readers, hub: acquireHub(abs)}
	d.executor = executor{d: d, w: writer, r: readers}
	return d, nil
}

// dsn is the connection string: WAL, a busy timeout, BEGIN IMMEDIATE for
// every transaction of the writer; readers are query-only.
func dsn(abs string, reader bool) string {
	v := url.Values{}
	v.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout))
	v.Add("_pragma", "journal_mode(WAL)")
	// FULL: a commit is on disk before it is acknowledged, so a power loss
	// loses no acknowledged job. Work commits in batches, so the fsyncs are
	// shared (see docs/sqlite.md for the figures).
	v.Add("_pragma", "synchronous(FULL)")
	v.Add("_pragma", "foreign_keys(OFF)")
	if reader {
		v.Add("_pragma", "query_only(ON)")
	} else {
		v.Set("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: v.Encode()}
	return u.String()
}

// checkPath catches the bad paths SQLite would report vaguely.
func checkPath(abs string) error {
	dir := filepath.Dir(abs)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &FileError{Path: abs, Problem: "directory " + dir + " does not exist", Err: err}
	case err != nil:
		return &FileError{Path: abs, Problem: err.Error(), Err: err}
	case !info.IsDir():
		return &FileError{Path: abs, Problem: dir + " is not a directory"}
	}
	info, err = os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !writableMode(dir) {
			return &FileError{Path: abs, Problem: "directory " + dir + " is read-only"}
		}
		return nil
	case err != nil:
		return &FileError{Path: abs, Problem: err.Error(), Err: err}
	case info.IsDir():
		return &FileError{Path: abs, Problem: "is a directory"}
	case info.Mode().Perm()&0o222 == 0:
		return &FileError{Path: abs, Problem: "file is read-only"}
	case !writableMode(dir):
		// WAL needs its -wal and -shm files next to the database.
		return &FileError{Path: abs, Problem: "directory " + dir + " is read-only (WAL needs to create files there)"}
	}
	return nil
}

func writableMode(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().Perm()&0o222 != 0
}

// checkWritable opens the writer and takes the write lock once, so that a
// file that is not a database or cannot be written fails here. Another
// process writing without pause can keep the lock past the busy timeout:
// the check tries again until ctx ends.
func checkWritable(ctx context.Context, db *sql.DB) error {
	for {
		err := tryWritable(ctx, db)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func tryWritable(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %s, want wal", mode)
	}
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE; COMMIT")
	return err
}

// fileError names what SQLite found wrong with the file.
func fileError(abs string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return &FileError{Path: abs, Problem: "not a SQLite database", Err: err}
		case sqlite3.SQLITE_READONLY:
			return &FileError{Path: abs, Problem: "file is read-only", Err: err}
		case sqlite3.SQLITE_CANTOPEN:
			return &FileError{Path: abs, Problem: "cannot open file", Err: err}
		case sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
			return &FileError{Path: abs, Problem: "permission denied", Err: err}
		}
	}
	return &FileError{Path: abs, Problem: err.Error(), Err: err}
}
