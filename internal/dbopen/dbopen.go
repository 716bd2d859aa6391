// Package dbopen opens a Skiplock driver from a database URL: postgres://
// or postgresql:// for PostgreSQL; sqlite:PATH, sqlite:///ABS/PATH or a bare
// path ending in .db for the embedded SQLite.
package dbopen

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
)

// DefaultURL is the database when none is given: a SQLite file here.
const DefaultURL = "skiplock.db"

// Kind answers "postgres" or "sqlite" for a URL, or an error naming it.
func Kind(url string) (string, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return "postgres", nil
	case strings.HasPrefix(url, "sqlite:"), strings.HasSuffix(url, ".db"):
		return "sqlite", nil
	}
	return "", fmt.Errorf("database url %q: want postgres://…, sqlite:PATH or a path ending in .db", url)
}

// Opened is an open driver and how to close it.
type Opened struct {
	Driver driver.Driver
	Close  func()
	// Applied are the migrations the open applied: every one, to a new
	// SQLite file.
	Applied []driver.Migration
}

// Tokens is the driver's token store, or an error wrapping
// driver.ErrUnsupported.
func (o Opened) Tokens() (driver.TokenStore, error) { return driver.As[driver.TokenStore](o.Driver) }

// Options are what a PostgreSQL database takes beyond its URL; a SQLite
// one refuses them.
type Options struct {
	// ListenDatabaseURL is a direct PostgreSQL URL for LISTEN, when the
	// database URL goes through a pooler in transaction mode.
	ListenDatabaseURL string
	// Pools split the connections by role within a budget.
	Pools pgdriver.Pools
	// Logger says when a pool was full (default slog.Default()).
	Logger *slog.Logger
}

// openers are the drivers by kind; sqlite registers itself (sqlite.go).
var openers = map[string]func(ctx context.Context, url string, opts Options) (Opened, error){
	"postgres": func(ctx context.Context, url string, opts Options) (Opened, error) {
		d, err := pgdriver.Open(ctx, url, pgdriver.Options{ListenDatabaseURL: opts.ListenDatabaseURL, Pools: opts.Pools, Logger: opts.Logger})
		if err != nil {
			return Opened{}, pgConnectError(err)
		}
		return Opened{Driver: d, Close: d.Close}, nil
	},
}

// Open opens the database at url.
func Open(ctx context.Context, url string) (Opened, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith opens the database at url with opts.
func OpenWith(ctx context.Context, url string, opts Options) (Opened, error) {
	kind, err := Kind(url)
	if err != nil {
		return Opened{}, err
	}
	if opts.ListenDatabaseURL != "" {
		if k, err := Kind(opts.ListenDatabaseURL); err != nil || k != "postgres" || kind != "postgres" {
			return Opened{}, badDatabase{fmt.Errorf("listen database url %q: want a postgres:// URL beside a postgres:// database url", opts.ListenDatabaseURL)}
		}
	}
	if opts.Pools != (pgdriver.Pools{}) && kind != "postgres" {
		return Opened{}, badDatabase{fmt.Errorf("pools: connection pools apply to PostgreSQL only, not to %s", url)}
	}
	open, ok := openers[kind]
	if !ok {
		return Opened{}, fmt.Errorf("database url %q: the %s driver is not built in", url, kind)
	}
	return open(ctx, url, opts)
}

// OpenExisting opens the database at url like Open but never creates one: a
// SQLite file that does not exist answers ErrNoDatabase. Commands that only
// read, or act on what is stored, open this way. (Open creates no PostgreSQL
// database either: the server's administrator does.)
func OpenExisting(ctx context.Context, url string) (Opened, error) {
	return OpenExistingWith(ctx, url, Options{})
}

// OpenExistingWith is OpenExisting with opts.
func OpenExistingWith(ctx context.Context, url string, opts Options) (Opened, error) {
	if kind, err := Kind(url); err == nil && kind == "sqlite" {
		if err := sqliteExists(SQLitePath(url)); err != nil {
			return Opened{}, err
		}
	}
	return OpenWith(ctx, url, opts)
}
