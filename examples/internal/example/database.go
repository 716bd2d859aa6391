package example

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
)

// Open answers a migrated driver, where it is, and how to close it.
//
//   - dbURL empty: a new SQLite file in a temporary directory, removed at
//     close.
//   - a PostgreSQL URL with search_path: that schema, as it is (the caller
//     owns it).
//   - any other PostgreSQL URL: a new schema skiplock_example_…, dropped
//     at close, so that the example leaves nothing behind.
func Open(ctx context.Context, dbURL string) (driver.Driver, string, func(), error) {
	if dbURL == "" {
		return openSQLite(ctx)
	}
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, "", nil, fmt.Errorf("--database-url: want postgres://…, got %q", dbURL)
	}
	if u.Query().Get("search_path") != "" {
		drv, err := openPostgres(ctx, dbURL)
		return drv, "PostgreSQL, schema " + u.Query().Get("search_path"), func() { drv.Close() }, err
	}
	return openPostgresSchema(ctx, u)
}

func openSQLite(ctx context.Context) (driver.Driver, string, func(), error) {
	dir, err := os.MkdirTemp("", "skiplock-example-")
	if err != nil {
		return nil, "", nil, err
	}
	path := filepath.Join(dir, "skiplock.db")
	drv, err := sqlitedriver.Open(ctx, path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	closeDB := func() { _ = drv.Close(); _ = os.RemoveAll(dir) }
	if _, err := drv.Migrator().Up(ctx, 0); err != nil {
		closeDB()
		return nil, "", nil, fmt.Errorf("migrate sqlite: %w", err)
	}
	return drv, "SQLite, " + path, closeDB, nil
}

func openPostgres(ctx context.Context, dbURL string) (*pgdriver.Driver, error) {
	drv, err := pgdriver.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	if _, err := drv.Migrator().Up(ctx, 0); err != nil {
		drv.Close()
		return nil, fmt.Errorf("migrate postgres: %w", err)
	}
	return drv, nil
}

// openPostgresSchema creates a schema of the example's own and drops it
// at close.
func openPostgresSchema(ctx context.Context, u *url.URL) (driver.Driver, string, func(), error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	schema := "skiplock_example_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return nil, "", nil, fmt.Errorf("connect to postgres: %w", err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return nil, "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, u.String()); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			_ = conn.Close(ctx)
		}
	}
	q := u.Query()
	q.Set("search_path", schema)
	su := *u
	su.RawQuery = q.Encode()
	drv, err := openPostgres(ctx, su.String())
	if err != nil {
		drop()
		return nil, "", nil, err
	}
	return drv, "PostgreSQL, schema " + schema + " (dropped at the end)", func() { drv.Close(); drop() }, nil
}
