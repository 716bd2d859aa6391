package dbopen

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skiplock/skiplock/driver/sqlitedriver"
)

func init() {
	openers["sqlite"] = openSQLite
}

// SQLitePath answers the file path of a sqlite URL: sqlite:///abs/path.db,
// sqlite:relative.db, sqlite://relative.db, or a bare path ending in .db.
func SQLitePath(url string) string {
	p, ok := strings.CutPrefix(url, "sqlite:")
	if !ok {
		return url
	}
	if rest, ok := strings.CutPrefix(p, "//"); ok {
		p = rest // sqlite:///abs → /abs; sqlite://rel → rel
	}
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}

// openSQLite opens the file and migrates it when it is new, so that every
// command works on a new file at once. An existing Skiplock file is left
// at its version (`skiplock migrate` changes it).
func openSQLite(ctx context.Context, url string, _ Options) (Opened, error) {
	path := SQLitePath(url)
	if path == "" {
		return Opened{}, badDatabase{errors.New("database url " + url + ": no file path")}
	}
	d, err := sqlitedriver.Open(ctx, path)
	if err != nil {
		return Opened{}, wrapSQLite(err)
	}
	applied, err := d.MigrateNew(ctx)
	if err != nil {
		_ = d.Close()
		return Opened{}, wrapSQLite(err)
	}
	return Opened{Driver: d, Close: func() { _ = d.Close() }, Applied: applied}, nil
}

// sqliteExists answers ErrNoDatabase (and ErrBadDatabase) when path does not
// exist; other problems with the path are left to the open that follows.
func sqliteExists(path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	shown := path
	if !filepath.IsAbs(path) && filepath.Dir(path) == "." && !strings.HasPrefix(path, ".") {
		shown = "./" + path // a bare name reads as a path only with its directory
	}
	return badDatabase{fmt.Errorf("%w at %s", ErrNoDatabase, shown)}
}

func wrapSQLite(err error) error {
	if errors.Is(err, sqlitedriver.ErrUnusable) {
		return badDatabase{err}
	}
	return err
}

// badDatabase keeps an error's message and adds ErrBadDatabase to it.
type badDatabase struct{ err error }

func (b badDatabase) Error() string   { return b.err.Error() }
func (b badDatabase) Unwrap() []error { return []error{b.err, ErrBadDatabase} }
