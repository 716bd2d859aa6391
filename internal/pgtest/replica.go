package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver/pgdriver"
)

// Replica creates a fresh schema on the primary of SKIPLOCK_TEST_PRIMARY_URL,
// migrated, and answers a driver on it that reads from the streaming
// replica of SKIPLOCK_TEST_REPLICA_URL (scripts/test starts the pair), and
// a pool on the replica for the test's own checks. Without both URLs the
// test is skipped, saying so.
func Replica(t testing.TB) (*pgdriver.Driver, *pgxpool.Pool) {
	t.Helper()
	primary, replica := os.Getenv("SKIPLOCK_TEST_PRIMARY_URL"), os.Getenv("SKIPLOCK_TEST_REPLICA_URL")
	if primary == "" || replica == "" {
		t.Skip("no primary and streaming replica: scripts/test starts a pair and sets SKIPLOCK_TEST_PRIMARY_URL and SKIPLOCK_TEST_REPLICA_URL")
	}
	schema := freshOn(t, primary, "SCHEMA", "", " CASCADE")
	d := migrated(t, WithSearchPath(primary, schema))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, WithSearchPath(replica, schema))
	if err != nil {
		t.Fatalf("connect to the replica: %v", err)
	}
	t.Cleanup(pool.Close)
	// The replica has the schema once it replays the primary's WAL up to
	// the end of the migrations (another test may hold its replay paused).
	var lsn string
	if err := d.Pool().QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	for {
		var caught bool
		err := pool.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&caught)
		if err != nil {
			t.Fatalf("wait for the replica to replay the migrations: %v", err)
		}
		if caught {
			return d.ReadFrom(pool), pool
		}
		select {
		case <-ctx.Done():
			t.Fatal("the replica did not replay the migrations within 30 s")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
