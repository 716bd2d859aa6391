package sqlitetest

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver/sqlitedriver"
)

// SetNextJobID makes the next job inserted through d get id (which must be
// above every id the file handed out), so that a test can reach ids no test
// inserts its way to (past 2³¹).
func SetNextJobID(t testing.TB, d *sqlitedriver.Driver, id int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// AUTOINCREMENT hands out one more than the largest id it recorded in
	// sqlite_sequence, whose row for the table exists after a first insert.
	db := d.DB()
	res, err := db.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = ? WHERE name = 'skiplock_jobs'`, id-1)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			_, err = db.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES ('skiplock_jobs', ?)`, id-1)
		}
	}
	if err != nil {
		t.Fatalf("set the next job id to %d: %v", id, err)
	}
}
