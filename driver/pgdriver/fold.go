package pgdriver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// foldStagePrefix names the table a fold copies a month into before it
// becomes the month partition; ArchivePartitions does not list it.
const foldStagePrefix = "skiplock_jobs_archive_fold_"

// foldCopied, when set (tests), runs after a fold copied the month's jobs
// and before it takes the archive's lock.
var foldCopied func()

// errFoldSkipped rolls a fold's transaction back; the reason is in the fold.
var errFoldSkipped = errors.New("fold skipped")

// ArchiveFoldMonth merges a month's day partitions into one; see
// driver.RetentionStore. One transaction, so that a fold cut short leaves
// nothing: the copy reads the days under no lock but a reader's, then the
// archive is locked, the copy brought level with what changed meanwhile (a
// retry's delete) and swapped in.
func (e executor) ArchiveFoldMonth(ctx context.Context, month time.Time, maxJobs int64) (driver.ArchiveFold, error) {
	month = time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)
	f := driver.ArchiveFold{Name: partitionPrefix + month.Format("200601"), Month: month}
	end := month.AddDate(0, 1, 0)
	if end.After(time.Now().Add(-24 * time.Hour)) {
		return f, fmt.Errorf("fold archive month %s: not over by a day yet", month.Format("2006-01"))
	}
	var locked time.Time
	var days []string
	err := e.inTx(ctx, func(tx executor) (err error) {
		if err := tx.foldCopy(ctx, &f, end, maxJobs); err != nil {
			return err
		}
		if foldCopied != nil {
			foldCopied()
		}
		days, err = tx.foldSwap(ctx, &f, end, &locked)
		return err
	})
	if !locked.IsZero() {
		f.Locked = time.Since(locked)
	}
	if errors.Is(err, errFoldSkipped) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("fold archive month %s: %w", month.Format("2006-01"), err)
	}
	// Dropped after the archive's lock is let go: detached, the days hold
	// no job the archive shows (the next janitor run drops one left here).
	for _, d := range days {
		if _, err := e.q.Exec(ctx, `DROP TABLE IF EXISTS `+pgx.Identifier{d}.Sanitize()); err != nil {
			return f, fmt.Errorf("fold archive month %s: drop the detached %s: %w", month.Format("2006-01"), d, err)
		}
	}
	return f, nil
}

// foldCopy copies the month's jobs, wherever they are, into a new table
// with the archive's columns, constraints and indexes, and a check of the
// month's range (so that attaching it reads none of it).
func (tx executor) foldCopy(ctx context.Context, f *driver.ArchiveFold, end time.Time, maxJobs int64) error {
	var mine, folded bool
	err := tx.q.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext($1)), to_regclass($1) IS NOT NULL`,
		f.Name).Scan(&mine, &folded)
	switch {
	case err != nil:
		return err
	case !mine:
		f.Skipped = "another fold of the month is under way"
		return errFoldSkipped
	case folded:
		f.Skipped = "already folded"
		return errFoldSkipped
	}
	stage := pgx.Identifier{foldStagePrefix + f.Month.Format("200601")}.Sanitize()
	from, to := f.Month.Format(time.RFC3339), end.Format(time.RFC3339)
	for _, s := range []string{
		`DROP TABLE IF EXISTS ` + stage,
		`CREATE TABLE ` + stage + ` (LIKE skiplock_jobs_archive INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`,
		fmt.Sprintf(`ALTER TABLE %s ADD CONSTRAINT skiplock_fold_range CHECK (finished_at >= '%s' AND finished_at < '%s')`, stage, from, to),
	} {
		if _, err := tx.q.Exec(ctx, s); err != nil {
			return err
		}
	}
	tag, err := tx.q.Exec(ctx, `INSERT INTO `+stage+` SELECT * FROM skiplock_jobs_archive
		WHERE finished_at >= $1 AND finished_at < $2`, f.Month, end)
	if err != nil {
		return err
	}
	if f.Jobs = tag.RowsAffected(); f.Jobs > maxJobs {
		f.Skipped = fmt.Sprintf("%d jobs, more than the %d a fold moves", f.Jobs, maxJobs)
		return errFoldSkipped
	}
	// Statistics, so that the reconciliation under the lock plans a hash
	// join rather than a probe per job.
	_, err = tx.q.Exec(ctx, `ANALYZE `+stage)
	return err
}

// foldSwap locks the archive, levels the copy with the month's jobs as
// they are now, and puts it in the days' place. Nothing else writes the
// archive while the lock is held: what the copy missed is found here.
func (tx executor) foldSwap(ctx context.Context, f *driver.ArchiveFold, end time.Time, locked *time.Time) ([]string, error) {
	stage := pgx.Identifier{foldStagePrefix + f.Month.Format("200601")}.Sanitize()
	month := pgx.Identifier{f.Name}.Sanitize()
	if _, err := tx.q.Exec(ctx, "SET LOCAL lock_timeout = '"+detachLockTimeout+"'"); err != nil {
		return nil, err
	}
	if _, err := tx.q.Exec(ctx, `LOCK TABLE skiplock_jobs_archive IN ACCESS EXCLUSIVE MODE`); err != nil {
		return nil, err
	}
	*locked = time.Now()
	var gone, came []int64
	err := tx.q.QueryRow(ctx, `SELECT coalesce(array_agg(s.id) FILTER (WHERE a.id IS NULL), '{}'),
		       coalesce(array_agg(a.id) FILTER (WHERE s.id IS NULL), '{}')
		FROM (SELECT id FROM `+stage+`) s
		FULL JOIN (SELECT id FROM skiplock_jobs_archive WHERE finished_at >= $1 AND finished_at < $2) a ON a.id = s.id
		WHERE s.id IS NULL OR a.id IS NULL`, f.Month, end).Scan(&gone, &came)
	if err != nil {
		return nil, err
	}
	if len(gone) > 0 {
		if _, err := tx.q.Exec(ctx, `DELETE FROM `+stage+` WHERE id = ANY($1)`, gone); err != nil {
			return nil, err
		}
	}
	if len(came) > 0 {
		if _, err := tx.q.Exec(ctx, `INSERT INTO `+stage+` SELECT * FROM skiplock_jobs_archive
			WHERE id = ANY($1) AND finished_at >= $2 AND finished_at < $3`, came, f.Month, end); err != nil {
			return nil, err
		}
	}
	f.Jobs += int64(len(came) - len(gone))
	days, err := tx.foldDays(ctx, f.Month)
	if err != nil {
		return nil, err
	}
	f.Days = len(days)
	if err := tx.foldAttach(ctx, stage, month, f, end, days); err != nil {
		return nil, err
	}
	return days, tx.q.QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, f.Name).Scan(&f.Bytes)
}

// foldDays names the day partitions of the month now attached.
func (tx executor) foldDays(ctx context.Context, month time.Time) ([]string, error) {
	rows, err := tx.q.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'skiplock_jobs_archive'::regclass AND c.relname ~ $1 ORDER BY c.relname`,
		"^"+partitionPrefix+month.Format("200601")+"[0-9]{2}$")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// foldAttach swaps the copy in for the days (detached, dropped once the
// lock is let go) and for the month's rows left in the default partition,
// which would make the attach fail.
func (tx executor) foldAttach(ctx context.Context, stage, month string, f *driver.ArchiveFold, end time.Time, days []string) error {
	from, to := f.Month.Format(time.RFC3339), end.Format(time.RFC3339)
	if _, err := tx.q.Exec(ctx, `DELETE FROM skiplock_jobs_archive_default WHERE finished_at >= $1 AND finished_at < $2`,
		f.Month, end); err != nil {
		return err
	}
	var stmts []string
	for _, d := range days {
		stmts = append(stmts, `ALTER TABLE skiplock_jobs_archive DETACH PARTITION `+pgx.Identifier{d}.Sanitize())
	}
	stmts = append(stmts, `ALTER TABLE `+stage+` RENAME TO `+month,
		fmt.Sprintf(`ALTER TABLE skiplock_jobs_archive ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')`, month, from, to),
		`ALTER TABLE `+month+` DROP CONSTRAINT skiplock_fold_range`)
	for _, s := range stmts {
		if _, err := tx.q.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
