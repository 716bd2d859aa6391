package sqlitedriver_test

import (
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// Migration 032 records the queues of the jobs archived before it (down
// two steps: 033 and 032).
func TestMigrationRecordsArchivedQueues(t *testing.T) {
	d := sqlitetest.New(t)
	ctx := t.Context()
	if _, err := d.Migrator().Down(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DB().ExecContext(ctx, `INSERT INTO skiplock_jobs_archive (id, kind, queue, state, payload, run_at,
		created_at, updated_at, finished_at) VALUES (1, 'email', 'mail', 'completed', '{}', 0, 0, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Migrator().Up(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var name string
	var paused bool
	var created int64
	if err := d.DB().QueryRowContext(ctx, `SELECT name, paused, created_at FROM skiplock_queues`).Scan(&name, &paused, &created); err != nil {
		t.Fatal(err)
	}
	if at := time.UnixMicro(created); name != "mail" || paused || time.Since(at).Abs() > time.Minute {
		t.Fatalf("recorded queue %q, paused %v, created at %s", name, paused, at)
	}
}
