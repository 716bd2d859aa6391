package pgdriver_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// foldMonth is a month long over, which the tests fill with day partitions.
var foldMonth = time.Date(2025, time.March, 1, 0, 0, 0, 0, time.UTC)

// foldSetup is a schema whose archive has a day partition for each day of
// foldMonth but the one numbered missing (its jobs go to the default
// partition), with perDay failed jobs a day; it answers their ids.
func foldSetup(t *testing.T, perDay, missing int) (*pgdriver.Driver, context.Context, []int64) {
	t.Helper()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	for day := foldMonth; day.Before(foldMonth.AddDate(0, 1, 0)); day = day.Add(24 * time.Hour) {
		if day.Day() == missing {
			continue
		}
		exec(t, d, fmt.Sprintf(`CREATE TABLE skiplock_jobs_archive_%s PARTITION OF skiplock_jobs_archive
			FOR VALUES FROM ('%s') TO ('%s')`, day.Format("20060102"), day.Format(time.RFC3339),
			day.Add(24*time.Hour).Format(time.RFC3339)))
	}
	exec(t, d, fmt.Sprintf(`INSERT INTO skiplock_jobs_archive (id, kind, queue, state, payload, run_at, created_at, finished_at, updated_at)
		SELECT nextval('skiplock_jobs_id_seq'), 'k', 'default', 'failed', '{}', t, t, t, t
		FROM (SELECT '%s'::timestamptz + (g / %d) * interval '1 day' + interval '1 hour' AS t
		      FROM generate_series(0, %d) g) s`, foldMonth.Format(time.RFC3339), perDay, 31*perDay-1))
	return d, ctx, archivedIDs(t, d)
}

func exec(t *testing.T, d *pgdriver.Driver, sql string, args ...any) {
	t.Helper()
	if _, err := d.Pool().Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func archivedIDs(t *testing.T, d *pgdriver.Driver) []int64 {
	t.Helper()
	var ids []int64
	if err := d.Pool().QueryRow(t.Context(), `SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM skiplock_jobs_archive`).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// foldMonthParts answers the archive's partitions of foldMonth (the
// migration made today's and the next days').
func foldMonthParts(t *testing.T, d *pgdriver.Driver) []driver.ArchivePartition {
	t.Helper()
	parts, err := d.ArchivePartitions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(parts, func(p driver.ArchivePartition) bool { return p.Day.Year() != foldMonth.Year() })
}

func partitionNames(t *testing.T, d *pgdriver.Driver) []string {
	t.Helper()
	var names []string
	for _, p := range foldMonthParts(t, d) {
		names = append(names, p.Name)
	}
	return names
}

// TestArchiveFoldMonth: a month of day partitions becomes one month
// partition holding every job, found by id and listed as before; a job of
// the month left in the default partition goes into it too.
func TestArchiveFoldMonth(t *testing.T) {
	t.Parallel()
	d, ctx, ids := foldSetup(t, 3, 2)
	f, err := d.ArchiveFoldMonth(ctx, foldMonth, 100_000)
	if err != nil || f.Skipped != "" {
		t.Fatalf("fold: %+v, %v", f, err)
	}
	if f.Name != "skiplock_jobs_archive_202503" || f.Days != 30 || f.Jobs != int64(len(ids)) || f.Bytes <= 0 {
		t.Fatalf("fold %+v; want skiplock_jobs_archive_202503 of 30 days and %d jobs", f, len(ids))
	}
	parts := foldMonthParts(t, d)
	if len(parts) != 1 {
		t.Fatalf("partitions after the fold: %+v; want the month alone", parts)
	}
	if p := parts[0]; p.Name != f.Name || !p.Day.Equal(foldMonth) || !p.End.Equal(foldMonth.AddDate(0, 1, 0)) || p.Detached {
		t.Fatalf("month partition %+v; want [2025-03-01, 2025-04-01), attached", p)
	}
	for _, id := range ids {
		if j, err := d.JobGet(ctx, id); err != nil || j.State != driver.StateFailed {
			t.Fatalf("job %d after the fold: %+v, %v", id, j, err)
		}
	}
	listed, err := d.JobList(ctx, driver.ListParams{States: []driver.JobState{driver.StateFailed}, Limit: 1000})
	if err != nil || len(listed) != len(ids) {
		t.Fatalf("listed %d jobs (%v); want %d", len(listed), err, len(ids))
	}
	var inDefault int
	if err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM skiplock_jobs_archive_default`).Scan(&inDefault); err != nil || inDefault != 0 {
		t.Fatalf("default partition holds %d jobs (%v) after the fold; want 0", inDefault, err)
	}
	if again, err := d.ArchiveFoldMonth(ctx, foldMonth, 100_000); err != nil || again.Skipped == "" {
		t.Fatalf("a second fold: %+v, %v; want skipped", again, err)
	}
}

// TestArchiveFoldMonthLevelsWhatChangedDuringTheCopy: a job retried after
// the fold copied it, before the swap, is not brought back into the
// archive; a job archived into the month meanwhile is kept. Not parallel:
// the hook is the package's.
func TestArchiveFoldMonthLevelsWhatChangedDuringTheCopy(t *testing.T) {
	d, ctx, ids := foldSetup(t, 2, 0)
	retried, late := ids[5], int64(0)
	pgdriver.OnFoldCopied(t, func() {
		if j, err := d.JobRetry(ctx, retried); err != nil || j.State != driver.StatePending {
			t.Errorf("retry during the fold: %+v, %v", j, err)
		}
		if err := d.Pool().QueryRow(ctx, `INSERT INTO skiplock_jobs_archive (id, kind, queue, state, payload, run_at, created_at, finished_at, updated_at)
			SELECT nextval('skiplock_jobs_id_seq'), 'k', 'default', 'failed', '{}', t, t, t, t FROM (SELECT $1::timestamptz AS t) s
			RETURNING id`, foldMonth.Add(100*time.Hour)).Scan(&late); err != nil {
			t.Errorf("archive a job during the fold: %v", err)
		}
	})
	f, err := d.ArchiveFoldMonth(ctx, foldMonth, 100_000)
	if err != nil || f.Skipped != "" || f.Days != 31 {
		t.Fatalf("fold: %+v, %v", f, err)
	}
	want := append(slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return id == retried }), late)
	if got := archivedIDs(t, d); !slices.Equal(got, want) || f.Jobs != int64(len(want)) {
		t.Fatalf("archive after the fold: %d jobs (fold says %d), want %d: retried %d, archived late %d; got %v",
			len(got), f.Jobs, len(want), retried, late, got)
	}
	if j, err := d.JobGet(ctx, retried); err != nil || j.State != driver.StatePending {
		t.Fatalf("retried job after the fold: %+v, %v; want it pending, once", j, err)
	}
}

// TestArchiveFoldMonthBound: a month of more jobs than the bound is left as
// it is; a partition for a day of a folded month is not made again.
func TestArchiveFoldMonthBound(t *testing.T) {
	t.Parallel()
	d, ctx, _ := foldSetup(t, 2, 0)
	before := partitionNames(t, d)
	f, err := d.ArchiveFoldMonth(ctx, foldMonth, 61)
	if err != nil || f.Skipped == "" || !slices.Equal(partitionNames(t, d), before) {
		t.Fatalf("fold of 62 jobs bound to 61: %+v, %v; partitions %d → %d; want skipped, unchanged",
			f, err, len(before), len(partitionNames(t, d)))
	}
	if f, err = d.ArchiveFoldMonth(ctx, foldMonth, 62); err != nil || f.Skipped != "" {
		t.Fatalf("fold: %+v, %v", f, err)
	}
	if err := pgdriver.EnsurePartition(d, ctx, foldMonth.Add(72*time.Hour)); err != nil {
		t.Fatalf("partition for a day of a folded month: %v", err)
	}
	if got := partitionNames(t, d); !slices.Equal(got, []string{"skiplock_jobs_archive_202503"}) {
		t.Fatalf("partitions %v; want the month alone", got)
	}
	if _, err := d.ArchiveFoldMonth(ctx, time.Now(), 100); err == nil {
		t.Fatal("a fold of the month under way: no error")
	}
}
