package sqlitedriver_test

import (
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// Migration 032 records the queues of the jobs archived before it (down
// every step from 032 on, however many came after it).
func TestMigrationRecordsArchivedQueues(t *testing.T) {
	d := sqlitetest.New(t)
	ctx := t.Context()
	status, err := d.Migrator().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, m := range status {
		if m.Version >= 32 && m.Applied != nil {
			steps++
		}
	}
	if _, err := d.Migrator().Down(ctx, steps); err != nil {
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
