package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestCLIEnqueueWakesWorkers: `skiplock enqueue` exits only after the
// wake-up of its job went out, so that idle workers elsewhere start it at
// once instead of at their next poll.
func TestCLIEnqueueWakesWorkers(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	conn := pgtest.Conn(t, url)
	var schema string
	if err := conn.QueryRow(t.Context(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	ch := "skiplock_insert_" + schema[:min(len(schema), 40)]
	if _, err := conn.Exec(t.Context(), "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, url, "enqueue", "email", "--queue", "mail"); r.code != 0 {
		t.Fatalf("enqueue: %+v", r)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	note, err := conn.WaitForNotification(ctx)
	if err != nil {
		t.Fatalf("no wake-up from skiplock enqueue: %v", err)
	}
	if note.Payload != "mail" {
		t.Fatalf("wake-up for queue %q, want mail", note.Payload)
	}
}
