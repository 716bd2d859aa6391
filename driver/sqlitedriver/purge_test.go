package sqlitedriver_test

import (
	"crypto/sha256"
	"os"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestPurgeCheckpointsOffTheWriter: the purge copies the WAL into the
// database file itself every few transactions (on a reader), so that no
// commit on the writer, a claim's included, has to.
func TestPurgeCheckpointsOffTheWriter(t *testing.T) {
	t.Parallel()
	d := sqlitetest.New(t)
	ctx := t.Context()
	db := d.DB()
	// SQLite's own checkpoints off: only the purge's change the file.
	if _, err := db.ExecContext(ctx, "PRAGMA wal_autocheckpoint=0"); err != nil {
		t.Fatal(err)
	}
	const n = 4000 // 20 purge transactions
	finished := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Microsecond)
	if _, err := db.ExecContext(ctx, `
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
INSERT INTO skiplock_jobs_archive (id, kind, queue, state, run_at, created_at, finished_at, updated_at)
SELECT i, 'k', 'q', 'completed', ?2, ?2, ?2, ?2 FROM n`, n, finished.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, d.Path())
	refs := make([]driver.ArchivedRef, n)
	for i := range refs {
		refs[i] = driver.ArchivedRef{ID: int64(i + 1), State: driver.StateCompleted, Queue: "q", Kind: "k",
			FinishedAt: finished}
	}
	gone, err := d.ArchiveDelete(ctx, refs, finished.Add(-time.Hour), finished.Add(time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != n {
		t.Fatalf("purged %d jobs, want %d", len(gone), n)
	}
	if fileSum(t, d.Path()) == before {
		t.Fatal("the database file is as it was after 20 purge transactions: the purge did not checkpoint")
	}
	var left int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM skiplock_jobs_archive").Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d archived jobs left, want none", left)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
