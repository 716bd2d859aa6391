package sqlitedriver

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/migrations"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrator applies migrations in one BEGIN IMMEDIATE transaction on the
// writer, so that two processes migrating at once apply each step once.
type migrator struct{ d *Driver }

const migrationsTable = `CREATE TABLE IF NOT EXISTS skiplock_migrations (
	version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`

func (m *migrator) Status(ctx context.Context) ([]driver.Migration, error) {
	all, err := migrations.Load(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	if applied, err := m.applied(ctx); err != nil || applied != nil {
		return migrations.Status(all, applied), err
	}
	var out []driver.Migration
	err = m.locked(ctx, func(tx *sql.Tx) error {
		applied, err := appliedVersions(ctx, tx)
		out = migrations.Status(all, applied)
		return err
	})
	return out, err
}

func (m *migrator) Up(ctx context.Context, steps int) ([]driver.Migration, error) {
	all, err := migrations.Load(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	// With every step applied there is nothing to lock for: a process
	// opening a file that others write without pause would otherwise wait
	// for the write lock, and past the busy timeout fail.
	if applied, err := m.applied(ctx); err != nil || (applied != nil && len(migrations.Pending(all, applied, steps)) == 0) {
		return nil, err
	}
	var done []driver.Migration
	err = m.locked(ctx, func(tx *sql.Tx) error {
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for _, s := range migrations.Pending(all, applied, steps) {
			if _, err := tx.ExecContext(ctx, s.Up); err != nil {
				return fmt.Errorf("migration %03d_%s up: %w", s.Version, s.Name, err)
			}
			at := time.Now().UTC().Truncate(time.Microsecond)
			if _, err := tx.ExecContext(ctx, `INSERT INTO skiplock_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				s.Version, s.Name, at.UnixMicro()); err != nil {
				return err
			}
			done = append(done, driver.Migration{Version: s.Version, Name: s.Name, Applied: &at})
		}
		return nil
	})
	return done, err
}

func (m *migrator) Down(ctx context.Context, steps int) ([]driver.Migration, error) {
	all, err := migrations.Load(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var done []driver.Migration
	err = m.locked(ctx, func(tx *sql.Tx) error {
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for _, s := range migrations.Revertible(all, applied, steps) {
			if _, err := tx.ExecContext(ctx, s.Down); err != nil {
				return fmt.Errorf("migration %03d_%s down: %w", s.Version, s.Name, err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM skiplock_migrations WHERE version = ?`, s.Version); err != nil {
				return err
			}
			done = append(done, driver.Migration{Version: s.Version, Name: s.Name})
		}
		return nil
	})
	return done, err
}

// locked runs fn in a BEGIN IMMEDIATE transaction on the writer, with the
// migrations table there.
func (m *migrator) locked(ctx context.Context, fn func(*sql.Tx) error) error {
	// Statements prepared against the old schema go; SQLite would redo
	// them anyway, and a dropped table must not linger in the cache.
	m.d.warmed.Store(false)
	m.d.stmts.Range(func(k, v any) bool {
		_ = v.(*sql.Stmt).Close()
		m.d.stmts.Delete(k)
		return true
	})
	tx, err := m.d.writer.BeginTx(ctx, nil)
	if err != nil {
		return fileError(m.d.path, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, migrationsTable); err != nil {
		return fileError(m.d.path, err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// applied reads the applied versions on a reader, without the write lock.
// It answers nil when the file has no migrations table yet.
func (m *migrator) applied(ctx context.Context) (map[int]time.Time, error) {
	var n int
	err := m.d.readers.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'skiplock_migrations'`).Scan(&n)
	if err != nil {
		return nil, fileError(m.d.path, err)
	}
	if n == 0 {
		return nil, nil
	}
	applied, err := appliedVersions(ctx, m.d.readers)
	if err != nil {
		return nil, fileError(m.d.path, err)
	}
	return applied, nil
}

// queryer is a transaction or a pool.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func appliedVersions(ctx context.Context, q queryer) (map[int]time.Time, error) {
	rows, err := q.QueryContext(ctx, `SELECT version, applied_at FROM skiplock_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]time.Time{}
	for rows.Next() {
		var v int
		var at storedMicros
		if err := rows.Scan(&v, &at); err != nil {
			return nil, err
		}
		out[v] = at.time()
	}
	return out, rows.Err()
}

// MigrateNew applies every migration to a new file (one without tables) and
// leaves a Skiplock file as it is; a file with other tables and no
// Skiplock schema is not a Skiplock database (FileError). It answers the
// steps it applied. The command line opens files this way, so that it
// works on a new file at once, while `skiplock migrate down` stays down.
func (d *Driver) MigrateNew(ctx context.Context) ([]driver.Migration, error) {
	var tables, skiplock int
	err := d.writer.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE name = 'skiplock_migrations')
		FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`).Scan(&tables, &skiplock)
	if err != nil {
		return nil, fileError(d.path, err)
	}
	switch {
	case skiplock > 0:
		return nil, nil
	case tables > 0:
		return nil, &FileError{Path: d.path, Problem: fmt.Sprintf("not a Skiplock database (it has %d other tables; "+
			"add Skiplock to it with the library's Migrator)", tables)}
	}
	return d.Migrator().Up(ctx, 0)
}
