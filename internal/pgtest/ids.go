package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver/pgdriver"
)

// SetNextJobID makes the next job inserted through d get id, so that a test
// can reach ids no test inserts its way to (past 2³¹).
func SetNextJobID(t testing.TB, d *pgdriver.Driver, id int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := d.Pool().Exec(ctx, `SELECT setval('skiplock_jobs_id_seq', $1::bigint, false)`, id); err != nil {
		t.Fatalf("set the next job id to %d: %v", id, err)
	}
}
