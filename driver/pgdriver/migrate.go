package pgdriver

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/migrations"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrator applies migrations under an advisory lock, each in its own
// transaction with its bookkeeping row.
type migrator struct{ pool *pgxpool.Pool }

const migrationsTable = `CREATE TABLE IF NOT EXISTS skiplock_migrations (
	version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`

func (m *migrator) Status(ctx context.Context) ([]driver.Migration, error) {
	var out []driver.Migration
	err := m.locked(ctx, func(tx pgx.Tx, all []migrations.Step) error {
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		out = migrations.Status(all, applied)
		return nil
	})
	return out, err
}

func (m *migrator) Up(ctx context.Context, steps int) ([]driver.Migration, error) {
	var done []driver.Migration
	err := m.locked(ctx, func(tx pgx.Tx, all []migrations.Step) error {
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for _, s := range migrations.Pending(all, applied, steps) {
			if _, err := tx.Exec(ctx, s.Up); err != nil {
				return fmt.Errorf("migration %03d_%s up: %w", s.Version, s.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO skiplock_migrations (version, name) VALUES ($1, $2)`, s.Version, s.Name); err != nil {
				return err
			}
			now := time.Now().UTC()
			done = append(done, driver.Migration{Version: s.Version, Name: s.Name, Applied: &now})
		}
		if len(done) > 0 {
			return executor{q: tx}.ArchivePrepare(ctx, time.Now().Add(72*time.Hour))
		}
		return nil
	})
	return done, err
}

func (m *migrator) Down(ctx context.Context, steps int) ([]driver.Migration, error) {
	var done []driver.Migration
	err := m.locked(ctx, func(tx pgx.Tx, all []migrations.Step) error {
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for _, s := range migrations.Revertible(all, applied, steps) {
			if _, err := tx.Exec(ctx, s.Down); err != nil {
				return fmt.Errorf("migration %03d_%s down: %w", s.Version, s.Name, err)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM skiplock_migrations WHERE version = $1`, s.Version); err != nil {
				return err
			}
			done = append(done, driver.Migration{Version: s.Version, Name: s.Name})
		}
		return nil
	})
	return done, err
}

// locked runs fn in one transaction holding the migration lock, so that two
// processes migrating at once apply each step once.
func (m *migrator) locked(ctx context.Context, fn func(pgx.Tx, []migrations.Step) error) error {
	all, err := migrations.Load(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('skiplock_migrate'))`); err != nil {
			return err
		}
		// Create the table only when missing: an up-to-date database then
		// sees no write, so that a server starts on a read-only one (a
		// standby about to be promoted).
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('skiplock_migrations') IS NOT NULL`).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := tx.Exec(ctx, migrationsTable); err != nil {
				return err
			}
		}
		return fn(tx, all)
	})
}

func appliedVersions(ctx context.Context, tx pgx.Tx) (map[int]time.Time, error) {
	rows, err := tx.Query(ctx, `SELECT version, applied_at FROM skiplock_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]time.Time{}
	for rows.Next() {
		var v int
		var at time.Time
		if err := rows.Scan(&v, scanTime(&at)); err != nil {
			return nil, err
		}
		out[v] = at
	}
	return out, rows.Err()
}
