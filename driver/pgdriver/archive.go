package pgdriver

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ArchivePrepare creates the archive's daily partitions from today up to
// `until`. Rows that landed in the default partition for such a day (the
// partition was missing when they finished) move into the new one.
func (e executor) ArchivePrepare(ctx context.Context, until time.Time) error {
	day := time.Now().UTC().Truncate(24 * time.Hour)
	for ; !day.After(until.UTC()); day = day.Add(24 * time.Hour) {
		if err := e.ensurePartition(ctx, day); err != nil {
			return fmt.Errorf("archive partition for %s: %w", day.Format(time.DateOnly), err)
		}
	}
	return nil
}

func (e executor) ensurePartition(ctx context.Context, day time.Time) error {
	name := "skiplock_jobs_archive_" + day.Format("20060102")
	var exists bool
	if err := e.q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil || exists {
		return err
	}
	from, to := day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339)
	ident := pgx.Identifier{name}.Sanitize()
	return e.inTx(ctx, func(tx executor) error {
		// Serialise with other processes preparing the same day.
		if _, err := tx.q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, name); err != nil {
			return err
		}
		if err := tx.q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil || exists {
			return err
		}
		stmts := []string{
			fmt.Sprintf(`CREATE TABLE %s (LIKE skiplock_jobs_archive INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`, ident),
			fmt.Sprintf(`WITH moved AS (DELETE FROM skiplock_jobs_archive_default WHERE finished_at >= '%s' AND finished_at < '%s' RETURNING *)
				INSERT INTO %s SELECT * FROM moved`, from, to, ident),
			fmt.Sprintf(`ALTER TABLE skiplock_jobs_archive ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')`, ident, from, to),
		}
		for _, s := range stmts {
			if _, err := tx.q.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}

func (e executor) HotTableVacuum(ctx context.Context, deadRows int64) (bool, error) {
	var dead int64
	err := e.q.QueryRow(ctx, `SELECT coalesce(n_dead_tup, 0) FROM pg_stat_user_tables WHERE relid = 'skiplock_jobs'::regclass`).Scan(&dead)
	if err != nil || dead < deadRows {
		return false, err
	}
	// VACUUM cannot run in a transaction: this goes straight to the pool.
	_, err = e.q.Exec(ctx, `VACUUM (ANALYZE) skiplock_jobs`)
	return err == nil, err
}
