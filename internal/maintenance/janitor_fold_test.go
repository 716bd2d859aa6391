package maintenance

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// foldDB is a PostgreSQL archive with a day partition for each day of two
// months long over (the 4th and 3rd before now's), each with a failed job
// and a completed one; the first day of the first month has only the
// completed one, so it expires whole. It answers the failed jobs' ids.
func foldDB(t *testing.T) (*janitorDB, [2]time.Time, []int64) {
	t.Helper()
	d, _ := pgtest.Schema(t)
	db := &janitorDB{t: t, ctx: t.Context(), drv: d, pg: true, exec: func(s string) {
		if _, err := d.Pool().Exec(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}}
	now := time.Now().UTC()
	first := time.Date(now.Year(), now.Month()-4, 1, 0, 0, 0, 0, time.UTC)
	months := [2]time.Time{first, first.AddDate(0, 1, 0)}
	for day := first; day.Before(first.AddDate(0, 2, 0)); day = day.Add(24 * time.Hour) {
		db.exec(fmt.Sprintf(`CREATE TABLE skiplock_jobs_archive_%s PARTITION OF skiplock_jobs_archive
			FOR VALUES FROM ('%s') TO ('%s')`, day.Format("20060102"), day.Format(time.RFC3339),
			day.Add(24*time.Hour).Format(time.RFC3339)))
		states := []string{"completed", "failed"}
		if day.Equal(first) {
			states = states[:1]
		}
		for _, st := range states {
			db.exec(fmt.Sprintf(`INSERT INTO skiplock_jobs_archive (id, kind, queue, state, payload, run_at, created_at, finished_at, updated_at)
				SELECT nextval('skiplock_jobs_id_seq'), 'k', 'default', '%s', '{}', t, t, t, t
				FROM (SELECT '%s'::timestamptz AS t) s`, st, day.Add(time.Hour).Format(time.RFC3339)))
		}
	}
	var failed []int64
	if err := d.Pool().QueryRow(db.ctx, `SELECT array_agg(id ORDER BY id) FROM skiplock_jobs_archive WHERE state = 'failed'`).Scan(&failed); err != nil {
		t.Fatal(err)
	}
	return db, months, failed
}

// keepFailed is the janitor of db with failed jobs kept for ever.
func keepFailed(db *janitorDB, now *time.Time) *Janitor {
	j := db.janitor(now)
	j.Policy.Keep[driver.StateFailed] = -1
	return j
}

func daysIn(month time.Time) int { return int(month.AddDate(0, 1, 0).Sub(month) / day) }

// oldParts answers the archive's partitions of the two months.
func oldParts(db *janitorDB, months [2]time.Time) []string {
	var out []string
	for name := range db.partitions() {
		for _, m := range months {
			if strings.HasPrefix(name, "skiplock_jobs_archive_"+m.Format("200601")) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestJanitorFoldsOldMonths: two months of day partitions (61 or 62 of
// them) whose failed jobs are kept for ever fold into two month
// partitions; the day whose every job expired is dropped, not folded; every
// kept job is still found by id and listed.
func TestJanitorFoldsOldMonths(t *testing.T) {
	t.Parallel()
	db, months, failed := foldDB(t)
	now := time.Now()
	rep := db.run(keepFailed(db, &now), RunOptions{})
	days := [2]int{daysIn(months[0]), daysIn(months[1])}
	if len(rep.Folds) != 2 || rep.Folds[0].Days != days[0]-1 || rep.Folds[1].Days != days[1] {
		t.Fatalf("folds %+v; want two, of %d and %d days", rep.Folds, days[0]-1, days[1])
	}
	want := []string{"skiplock_jobs_archive_" + months[0].Format("200601"), "skiplock_jobs_archive_" + months[1].Format("200601")}
	if got := oldParts(db, months); !slices.Equal(got, want) {
		t.Fatalf("partitions of the two months after the run: %v; want %v", got, want)
	}
	if len(rep.Partitions) != 1 || rep.Partitions[0].Name != "skiplock_jobs_archive_"+months[0].Format("20060102") {
		t.Fatalf("dropped %+v; want the first day, whose every job expired", rep.Partitions)
	}
	if rep.Run.Jobs != int64(days[0]+days[1]) || rep.Folds[0].Jobs+rep.Folds[1].Jobs != int64(len(failed)) {
		t.Fatalf("deleted %d jobs, folded %+v; want the %d completed gone and the %d failed folded",
			rep.Run.Jobs, rep.Folds, days[0]+days[1], len(failed))
	}
	for _, id := range failed {
		if j := db.get(id); j.State != driver.StateFailed {
			t.Fatalf("job %d after the fold: %s", id, j.State)
		}
	}
	listed, err := db.drv.JobList(db.ctx, driver.ListParams{States: []driver.JobState{driver.StateFailed}, Limit: 1000})
	if err != nil || len(listed) != len(failed) {
		t.Fatalf("listed %d failed jobs (%v); want %d", len(listed), err, len(failed))
	}
	if again := db.run(keepFailed(db, &now), RunOptions{}); len(again.Folds) != 0 || len(again.Partitions) != 0 {
		t.Fatalf("a second run folded %+v, dropped %+v; want nothing", again.Folds, again.Partitions)
	}
}

// TestJanitorFoldDryRunChangesNothing: a dry run names the months it would
// fold and leaves every partition and job.
func TestJanitorFoldDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	db, months, _ := foldDB(t)
	before, archived := oldParts(db, months), db.archived()
	now := time.Now()
	rep := db.run(keepFailed(db, &now), RunOptions{DryRun: true})
	if len(rep.Folds) != 2 || !rep.Folds[0].Month.Equal(months[0]) || !rep.Folds[1].Month.Equal(months[1]) {
		t.Fatalf("dry run's folds %+v; want the two months", rep.Folds)
	}
	if after := oldParts(db, months); !slices.Equal(after, before) || db.archived() != archived {
		t.Fatalf("dry run: partitions %d → %d, jobs %d → %d; want nothing changed", len(before), len(after),
			archived, db.archived())
	}
}

// TestJanitorDropsExpiredMonthPartition: once every job of a month
// partition expired, the partition is dropped whole, after the vault
// stored each of its jobs.
func TestJanitorDropsExpiredMonthPartition(t *testing.T) {
	t.Parallel()
	db, months, failed := foldDB(t)
	now := time.Now()
	if rep := db.run(keepFailed(db, &now), RunOptions{}); len(rep.Folds) != 2 {
		t.Fatalf("folds %+v; want two", rep.Folds)
	}
	v := &fakeVault{}
	j := db.janitor(&now)
	j.Vault = v
	rep, err := j.RunOnce(db.ctx, RunOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	var dropped []string
	for _, p := range rep.Partitions {
		dropped = append(dropped, p.Name)
	}
	want := []string{"skiplock_jobs_archive_" + months[0].Format("200601"), "skiplock_jobs_archive_" + months[1].Format("200601")}
	if !slices.Equal(dropped, want) || len(oldParts(db, months)) != 0 || rep.Run.Jobs != int64(len(failed)) {
		t.Fatalf("dropped %v (%d jobs), left %v; want %v dropped with %d jobs", dropped, rep.Run.Jobs,
			oldParts(db, months), want, len(failed))
	}
	if stored := slices.Sorted(slices.Values(v.ids)); !slices.Equal(stored, failed) {
		t.Fatalf("vault stored %v; want every job of the months %v", stored, failed)
	}
}
