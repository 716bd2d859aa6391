package bench

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/skiplock/skiplock"
)

// purgeAge is how long ago the seeded jobs finished: past the default
// retention of completed jobs (7 days), spread over purgeDays days.
const (
	purgeAge  = 10 * 24 * time.Hour
	purgeDays = 10
)

// SeedArchive inserts n completed jobs straight into the archive, finished
// purgeAge ago and earlier, spread over purgeDays days (each day in its own
// partition on PostgreSQL), for the janitor to purge. On SQLite their ids
// follow their finish times, as in an archive that jobs reached in about
// the order they were made: each day's jobs lie together in the table.
func SeedArchive(ctx context.Context, db *Database, n int) error {
	if db.Kind == "postgres" {
		return seedPostgres(ctx, db, n)
	}
	w, ok := db.Driver.(interface{ DB() *sql.DB })
	if !ok {
		return fmt.Errorf("seed archive: driver %T has no DB", db.Driver)
	}
	oldest := time.Now().Add(-purgeAge).UnixMicro()
	_, err := w.DB().ExecContext(ctx, `
		WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?1)
		INSERT INTO skiplock_jobs_archive (id, kind, queue, state, payload, run_at, created_at, finished_at, updated_at)
		SELECT 1000000000000 + n, 'bench_old', 'bench_old', 'completed', '{"n":' || n || '}', t, t, t, t
		FROM (SELECT n, ?2 - ?3 * 86400000000 + n * (?3 * 86400000000 / ?1) AS t FROM g)`,
		n, oldest, purgeDays)
	if err != nil {
		return fmt.Errorf("seed archive: %w", err)
	}
	return nil
}

func seedPostgres(ctx context.Context, db *Database, n int) error {
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for i := -1; i <= purgeDays; i++ {
		day := today.Add(-purgeAge - time.Duration(i)*24*time.Hour)
		_, err := db.Admin.Exec(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS skiplock_jobs_archive_%s
			PARTITION OF skiplock_jobs_archive FOR VALUES FROM ('%s') TO ('%s')`, day.Format("20060102"),
			day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339)))
		if err != nil {
			return fmt.Errorf("seed archive: partition: %w", err)
		}
	}
	_, err := db.Admin.Exec(ctx, `
		INSERT INTO skiplock_jobs_archive (id, kind, queue, state, payload, run_at, created_at, finished_at, updated_at)
		SELECT nextval('skiplock_jobs_id_seq'), 'bench_old', 'bench_old', 'completed', jsonb_build_object('n', g), t, t, t, t
		FROM (SELECT g, now() - $2::interval - (g % $3) * interval '1 day' - (g % 86400) * interval '1 second' AS t
		      FROM generate_series(1, $1::int) g) s`, n, fmt.Sprintf("%d seconds", int(purgeAge.Seconds())), purgeDays)
	if err != nil {
		return fmt.Errorf("seed archive: %w", err)
	}
	return nil
}

// purge runs the janitor once (forced: the seeded jobs are most of the
// archive) and answers its figures.
func purge(c *skiplock.Client) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		start := time.Now()
		rep, err := c.JanitorRun(ctx, skiplock.JanitorOptions{Force: true})
		if err != nil {
			return "", fmt.Errorf("purge: %w", err)
		}
		return fmt.Sprintf("purge_jobs=%d purge_partitions=%d purge_seconds=%.1f",
			rep.Run.Jobs, rep.Run.Partitions, time.Since(start).Seconds()), nil
	}
}
