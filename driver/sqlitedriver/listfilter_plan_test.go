package sqlitedriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// fillArchive stores n finished jobs, one created every 10 s up to now; the
// 50 oldest have the worker "w_old", one in 1,000 of the others the worker
// "w_rare" and the tag "rare", the rest one of 100 workers.
func fillArchive(tb testing.TB, d *sqlitedriver.Driver, n int) {
	tb.Helper()
	_, err := d.DB().ExecContext(context.Background(), `
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
INSERT INTO skiplock_jobs_archive (id, kind, queue, state, worker_id, tags, attempt, run_at, created_at, started_at,
    finished_at, updated_at)
SELECT i, 'crawl', 'default', 'completed',
    CASE WHEN i <= 50 THEN 'w_old' WHEN i % 1000 = 0 THEN 'w_rare' ELSE 'w' || (i % 100) END,
    CASE WHEN i % 1000 = 0 THEN '["rare"]' ELSE '["common"]' END, 1, t, t, t, t + 1000000, t + 1000000
FROM (SELECT i, ?2 - (?1 - i) * 10000000 AS t FROM n)`, n, time.Now().UnixMicro())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := d.DB().ExecContext(context.Background(), `ANALYZE`); err != nil {
		tb.Fatal(err)
	}
}

// listFilterCases are listings by each filter that has an index.
func listFilterCases() []struct {
	name, index string
	p           driver.ListParams
} {
	mid := time.Now().Add(-250000 * time.Second)
	return []struct {
		name, index string
		p           driver.ListParams
	}{
		{"worker", "skiplock_jobs_archive_worker", driver.ListParams{WorkerID: "w_rare", Limit: 50}},
		{"created_hour", "skiplock_jobs_archive_created", driver.ListParams{CreatedAfter: mid, CreatedBefore: mid.Add(time.Hour), Limit: 50}},
		{"finished_hour", "skiplock_jobs_archive_finished", driver.ListParams{FinishedAfter: mid, FinishedBefore: mid.Add(time.Hour), Limit: 50}},
	}
}

// TestListFiltersReadTheirIndexes: SQLite plans the listing once for every
// filter, so the statement holds a branch per access path; the branch of a
// listing by worker, created or finished time reads the archive by that
// index, and one without them reads ids newest first, never sorting the
// whole archive. Tags, metadata and error types are JSON text that SQLite
// does not index; they filter what the branch reads (docs/jobs.md).
func TestListFiltersReadTheirIndexes(t *testing.T) {
	t.Parallel()
	d := sqlitetest.New(t)
	ctx := t.Context()
	// 30,000 jobs: the created and finished hour 250,000 s ago (jobs 5,000
	// to 5,360) and 30 of w_rare's. The plan is the same from 5,000 jobs
	// to 50,000; filling the archive is most of the test's time.
	fillArchive(t, d, 30000)
	rows, err := d.DB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqlitedriver.Query("JobList"), must(sqlitedriver.JobListArgs(driver.ListParams{}))...)
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		id, parent int
		detail     string
	}
	var plan []step
	var lines []string
	for rows.Next() {
		var s step
		var unused int
		if err := rows.Scan(&s.id, &s.parent, &unused, &s.detail); err != nil {
			t.Fatal(err)
		}
		plan, lines = append(plan, s), append(lines, s.detail)
	}
	rows.Close()
	text := strings.Join(lines, "\n")
	for _, c := range listFilterCases() {
		if !strings.Contains(text, "SEARCH skiplock_jobs_archive USING INDEX "+c.index+" ") {
			t.Errorf("no branch reads %s:\n%s", c.index, text)
		}
		// The listing answers what the filter matches.
		jobs, err := d.JobList(ctx, c.p)
		if err != nil || len(jobs) == 0 {
			t.Fatalf("listing by %s: %d jobs, %v", c.name, len(jobs), err)
		}
	}
	// The branch without an index walks the archive by id: it sorts nothing.
	scans := 0
	for _, s := range plan {
		if s.detail != "SCAN skiplock_jobs_archive" {
			continue
		}
		scans++
		for _, o := range plan {
			if o.parent == s.parent && strings.HasPrefix(o.detail, "USE TEMP B-TREE") {
				t.Errorf("the archive is read whole and sorted:\n%s", text)
			}
		}
	}
	if scans != 1 {
		t.Errorf("%d branches scan the archive, want 1:\n%s", scans, text)
	}
}

func must(args []any, err error) []any {
	if err != nil {
		panic(err)
	}
	return args
}

// BenchmarkJobListFiltered lists a page of 50 out of 1,000,000 archived
// jobs (about 115 days) by each indexed filter, also matching only old
// jobs, and by a tag (read newest first):
// go test ./driver/sqlitedriver -run '^$' -bench JobListFiltered
func BenchmarkJobListFiltered(b *testing.B) {
	d := sqlitetest.New(b)
	fillArchive(b, d, 1000000)
	cases := listFilterCases()
	old := time.Now().Add(-9000000 * time.Second) // near the oldest jobs
	cases = append(cases, []struct {
		name, index string
		p           driver.ListParams
	}{
		{"worker_of_the_oldest", "", driver.ListParams{WorkerID: "w_old", Limit: 50}},
		{"created_hour_100_days_ago", "", driver.ListParams{CreatedAfter: old, CreatedBefore: old.Add(time.Hour), Limit: 50}},
		{"tag_1_in_1000", "", driver.ListParams{Tags: []string{"rare"}, Limit: 50}},
	}...)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if jobs, err := d.JobList(context.Background(), c.p); err != nil || len(jobs) == 0 {
					b.Fatalf("%d jobs, %v", len(jobs), err)
				}
			}
		})
	}
}
