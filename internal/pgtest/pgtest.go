// Package pgtest gives each test its own PostgreSQL schema, migrated, and
// drops it afterwards, so that tests run in parallel and leave nothing.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver/pgdriver"
)

// DefaultURL is the test database unless SKIPLOCK_TEST_DATABASE_URL says
// otherwise.
const DefaultURL = "postgres://postgres:postgres@127.0.0.1:5432/test?sslmode=disable"

// URL answers the test database's URL.
func URL() string {
	if u := os.Getenv("SKIPLOCK_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Schema creates a fresh schema and answers a migrated driver on it, and
// the schema's URL (with search_path) for processes the test starts.
func Schema(t testing.TB) (*pgdriver.Driver, string) {
	t.Helper()
	schema := fresh(t, "SCHEMA", "", " CASCADE")
	url := WithSearchPath(URL(), schema)
	return migrated(t, url), url
}

// Database creates a fresh database, migrated, and answers a driver on it
// and its URL; it is dropped when the test ends. For the few tests that
// must see no other test's sessions: the oldest snapshot a vacuum may not
// pass is per database. A role that may not create databases skips the
// test, saying so.
func Database(t testing.TB) (*pgdriver.Driver, string) {
	t.Helper()
	name := fresh(t, "DATABASE", `SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user`,
		" WITH (FORCE)")
	u, err := url.Parse(URL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return migrated(t, u.String()), u.String()
}

// fresh creates a schema or database (what) of a new name on the test
// database and drops it, with dropOptions, when the test ends. may, when
// given, asks whether the role may create one: if not the test is skipped.
func fresh(t testing.TB, what, may, dropOptions string) string {
	t.Helper()
	return freshOn(t, URL(), what, may, dropOptions)
}

// freshOn is fresh on the database at base.
func freshOn(t testing.TB, base, what, may, dropOptions string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "skiplock_test_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to test database %s: %v (is PostgreSQL running?)", base, err)
	}
	defer admin.Close(ctx)
	if may != "" {
		var ok bool
		if err := admin.QueryRow(ctx, may).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Skipf("the test role may not create a %s; this test needs one of its own", strings.ToLower(what))
		}
	}
	if _, err := admin.Exec(ctx, "CREATE "+what+" "+name); err != nil {
		t.Fatalf("create %s: %v", strings.ToLower(what), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop %s %s: %v", strings.ToLower(what), name, err)
			return
		}
		defer conn.Close(ctx)
		if err := retryDeadlock(ctx, func() error {
			_, err := conn.Exec(ctx, "DROP "+what+" "+name+dropOptions)
			return err
		}); err != nil {
			t.Errorf("drop %s %s: %v", strings.ToLower(what), name, err)
		}
	})
	return name
}

// retryDeadlock runs fn again, up to five times, while PostgreSQL picks it
// as a deadlock's victim: tests that make and drop schemas side by side
// (distributed ones on Citus above all) lock catalogs in different orders.
func retryDeadlock(ctx context.Context, fn func() error) error {
	for i := 1; ; i++ {
		err := fn()
		var pgErr *pgconn.PgError
		if err == nil || i == 5 || !errors.As(err, &pgErr) || pgErr.Code != "40P01" {
			return err
		}
		select {
		case <-time.After(time.Duration(i*50) * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// migrated opens a pool of up to 10 connections on url, closed when the
// test ends (before what fresh made is dropped), and migrates it.
func migrated(t testing.TB, url string) *pgdriver.Driver {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 10
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d := pgdriver.New(pool)
	if _, err := d.Migrator().Up(ctx, 0); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return d
}

// WithSearchPath adds search_path=schema to a URL.
func WithSearchPath(url, schema string) string {
	sep := "?"
	for _, c := range url {
		if c == '?' {
			sep = "&"
		}
	}
	return url + sep + "search_path=" + schema
}

// Conn opens a connection of its own to url (a Schema's), for a test that
// needs a session apart from the driver's pool: a held transaction, a
// prepared statement. It is closed when the test ends, before the schema is
// dropped.
func Conn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// HoldSnapshot opens a connection of its own to url and a repeatable-read
// transaction on it that has taken its snapshot without reading any table:
// vacuum can remove no row that dies after it until the test commits it
// (or ends).
func HoldSnapshot(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	holder := Conn(t, url)
	if _, err := holder.Exec(t.Context(), `BEGIN ISOLATION LEVEL REPEATABLE READ`); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(t.Context(), `SELECT 1`); err != nil { // takes the snapshot
		t.Fatal(err)
	}
	return holder
}

// HoldTable opens a connection to url (a Schema's) in a transaction that has
// read the hot table: it holds a lock on it, and a snapshot, until the
// caller commits or the test ends.
func HoldTable(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	holder := Conn(t, url)
	if _, err := holder.Exec(t.Context(), `BEGIN ISOLATION LEVEL REPEATABLE READ`); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(t.Context(), `SELECT count(*) FROM skiplock_jobs`); err != nil {
		t.Fatal(err)
	}
	return holder
}

// ReadOnlySwitch opens a driver of its own on url (a Schema's) whose
// sessions refuse writes while the answered switch is on, as a hot standby
// does: a connection takes default_transaction_read_only from the switch
// whenever it is acquired.
func ReadOnlySwitch(t testing.TB, url string) (*pgdriver.Driver, *atomic.Bool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := &atomic.Bool{}
	cfg.MaxConns = 10
	cfg.PrepareConn = func(ctx context.Context, conn *pgx.Conn) (bool, error) {
		_, err := conn.Exec(ctx, "SELECT set_config('default_transaction_read_only', $1, false)",
			map[bool]string{true: "on", false: "off"}[readOnly.Load()])
		return err == nil, err
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pgdriver.New(pool), readOnly
}

// Open answers a second driver, with a pool of its own, on a Schema's url:
// another process sharing the database. Its pool closes when the test ends.
func Open(t testing.TB, url string) *pgdriver.Driver {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pgdriver.New(pool)
}
