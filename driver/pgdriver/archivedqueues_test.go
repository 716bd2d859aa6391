package pgdriver_test

import (
	"testing"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// Migration 032 records the queues of the jobs archived before it (down
// every step from 032 on, however many came after it).
func TestMigrationRecordsArchivedQueues(t *testing.T) {
	d, _ := pgtest.Schema(t)
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
	if _, err := d.Pool().Exec(ctx, `INSERT INTO skiplock_jobs_archive (id, kind, queue, state, run_at, finished_at)
		VALUES (1, 'email', 'mail', 'completed', now(), now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Migrator().Up(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var name string
	var paused bool
	if err := d.Pool().QueryRow(ctx, `SELECT name, paused FROM skiplock_queues`).Scan(&name, &paused); err != nil {
		t.Fatal(err)
	}
	if name != "mail" || paused {
		t.Fatalf("recorded queue %q, paused %v", name, paused)
	}
}
