package pgtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgrole"
)

// PgBouncerURL answers SKIPLOCK_TEST_PGBOUNCER_URL: a PgBouncer in
// transaction mode in front of the test database, which scripts/test starts
// when pgbouncer is installed. A test that needs one skips without it.
func PgBouncerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("SKIPLOCK_TEST_PGBOUNCER_URL")
	if u == "" {
		t.Skip("SKIPLOCK_TEST_PGBOUNCER_URL is not set: no PgBouncer in transaction mode to test through (scripts/test starts one when pgbouncer is installed)")
	}
	return u
}

// PgBouncerDirectURL answers the database the test PgBouncer is in front
// of, reached directly (SKIPLOCK_TEST_PGBOUNCER_DIRECT_URL; scripts/test
// puts PgBouncer in front of a throwaway server, as the tests through it
// make roles), or the test database.
func PgBouncerDirectURL() string {
	if u := os.Getenv("SKIPLOCK_TEST_PGBOUNCER_DIRECT_URL"); u != "" {
		return u
	}
	return URL()
}

// PooledSchema is Schema reached through PgBouncer in transaction mode: a
// fresh schema, a role whose sessions start in it (the pooler keeps no
// search_path), and a driver migrated through the pooler with
// pool_mode=transaction, listening over a direct connection. It answers
// the driver and its pooled URL.
func PooledSchema(t testing.TB, opts pgdriver.Options) (*pgdriver.Driver, string) {
	t.Helper()
	bouncer := PgBouncerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	direct := PgBouncerDirectURL()
	schema := freshOn(t, direct, "SCHEMA", "", " CASCADE")
	admin, err := pgx.Connect(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	role, _, err := pgrole.ForSchema(ctx, admin, schema)
	if err != nil {
		t.Fatal(err)
	}
	dropRole(t, direct, role)
	pooled, err := pgrole.WithUser(bouncer, role)
	if err != nil {
		t.Fatal(err)
	}
	pooled += sep(pooled) + pgdriver.PoolModeParam + "=transaction"
	if opts.ListenDatabaseURL == "" {
		opts.ListenDatabaseURL = WithSearchPath(direct, schema)
	}
	d, err := pgdriver.Open(ctx, pooled, opts)
	if err != nil {
		t.Fatalf("open through pgbouncer %s: %v", pooled, err)
	}
	t.Cleanup(d.Close)
	if _, err := d.Migrator().Up(ctx, 0); err != nil {
		t.Fatalf("migrate through pgbouncer: %v", err)
	}
	return d, pooled
}

// dropRole drops role when the test ends, and first what it owns: the
// schema's drop, registered before, runs after this one. Sessions the
// pooler keeps open as the role end at its server_idle_timeout.
func dropRole(t testing.TB, direct, role string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, direct)
		if err != nil {
			t.Errorf("drop role %s: %v", role, err)
			return
		}
		defer conn.Close(ctx)
		id := pgx.Identifier{role}.Sanitize()
		if _, err := conn.Exec(ctx, "DROP OWNED BY "+id+" CASCADE"); err != nil {
			t.Errorf("drop what role %s owns: %v", role, err)
		}
		if _, err := conn.Exec(ctx, "DROP ROLE "+id); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
}

func sep(url string) string {
	if strings.Contains(url, "?") {
		return "&"
	}
	return "?"
}
