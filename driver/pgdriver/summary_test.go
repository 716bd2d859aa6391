package pgdriver_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// A janitor's summary reads the day partitions before its bound and no
// other: a recent day, where the volume is, is counted by the planner's
// estimate (its rows per page at the last analyze times its pages now),
// and by a count only while it has no estimate.
func TestArchiveSummaryLeavesTheDaysAfterItsBoundUnread(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	old := today.AddDate(0, 0, -10)
	if err := d.ArchivePrepare(ctx, today); err != nil {
		t.Fatal(err)
	}
	exec(t, d, fmt.Sprintf(`CREATE TABLE skiplock_jobs_archive_%s PARTITION OF skiplock_jobs_archive
		FOR VALUES FROM ('%s') TO ('%s')`, old.Format("20060102"), old.Format(time.RFC3339),
		old.Add(24*time.Hour).Format(time.RFC3339)))
	fill := func(at time.Time, n int) {
		t.Helper()
		exec(t, d, `INSERT INTO skiplock_jobs_archive (id, kind, queue, state, payload, run_at, created_at, finished_at, updated_at)
			SELECT nextval('skiplock_jobs_id_seq'), 'k', 'default', 'completed', '{"n": 1}', $1, $1, $1, $1
			FROM generate_series(1, $2)`, at, n)
	}
	fill(old.Add(time.Hour), 30)
	fill(today.Add(time.Second), 2000)
	recent := "skiplock_jobs_archive_" + today.Format("20060102")

	// summary runs ArchiveSummary in a transaction of its own and answers
	// it with the scans the transaction made of the recent day's partition.
	summary := func() (driver.ArchiveSummary, int64) {
		t.Helper()
		tx, inTx := driverTx(t, d)
		defer tx.Rollback(ctx)
		st, err := driver.As[driver.RetentionStore](inTx)
		if err != nil {
			t.Fatal(err)
		}
		// The view holds the scans this backend has not yet reported,
		// which may include an earlier transaction's: the difference is
		// this one's.
		scanned := func() (n int64) {
			t.Helper()
			if err := tx.QueryRow(ctx, `SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0) FROM pg_stat_xact_user_tables
				WHERE relid = $1::regclass`, recent).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := scanned()
		sum, err := st.ArchiveSummary(ctx, time.Now(), today)
		if err != nil {
			t.Fatal(err)
		}
		scans := scanned() - before
		if len(sum.Groups) != 1 || sum.Groups[0].Day != old || sum.Groups[0].Jobs != 30 {
			t.Fatalf("groups %+v, want the 30 jobs of %s", sum.Groups, old)
		}
		return sum, scans
	}
	if sum, scans := summary(); sum.Later != 2000 || sum.Estimated || scans == 0 {
		t.Fatalf("before an analyze: later %d (estimated %v), %d scans of %s; want 2000 counted", sum.Later, sum.Estimated, scans, recent)
	}
	exec(t, d, `ANALYZE `+recent)
	fill(today.Add(time.Minute), 2000)
	sum, scans := summary()
	if !sum.Estimated || scans != 0 || sum.Later < 3600 || sum.Later > 4400 {
		t.Fatalf("after an analyze: later %d (estimated %v), %d scans of %s; want about 4000 unread", sum.Later, sum.Estimated, scans, recent)
	}
}
