package server_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// readOnlyDB is a database whose writes a test can refuse and allow.
type readOnlyDB struct {
	name string
	open func(t *testing.T) (driver.Driver, func(readOnly bool))
}

var readOnlyDBs = []readOnlyDB{
	{name: "postgres", open: func(t *testing.T) (driver.Driver, func(bool)) {
		_, url := pgtest.Schema(t)
		d, sw := pgtest.ReadOnlySwitch(t, url)
		return d, sw.Store
	}},
	{name: "sqlite", open: func(t *testing.T) (driver.Driver, func(bool)) {
		d := sqlitetest.New(t)
		return d, func(on bool) { sqlitetest.SetReadOnly(t, d, on) }
	}},
}

// refused checks an answer of 503 unavailable whose message says want.
func refused(t *testing.T, a answer, want string) {
	t.Helper()
	code, _ := a.errCode()
	msg, _ := a.body["error"].(map[string]any)["message"].(string)
	if a.status != http.StatusServiceUnavailable || code != "unavailable" || !strings.Contains(msg, want) {
		t.Fatalf("status %d, want 503 unavailable saying %q: %s", a.status, want, a.raw)
	}
}

// TestReadOnlyDatabase: on a database that refuses writes, a write answers
// 503 saying the database is read-only and /healthz answers 503 naming
// it; once writes pass again, so does /healthz.
func TestReadOnlyDatabase(t *testing.T) {
	for _, db := range readOnlyDBs {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			drv, setReadOnly := db.open(t)
			b := setupOn(t, drv, nil)
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x"}`), 201)
			if h := must(t, b.do(t, "GET", "/healthz", "", nil), 200); h.body["writes"] != "ok" {
				t.Errorf("healthy /healthz: %s", h.raw)
			}
			setReadOnly(true)
			refused(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x"}`), "database is read-only")
			h := b.do(t, "GET", "/healthz", "", nil)
			refused(t, h, "database is read-only")
			if h.body["writes"] != "read_only" || h.body["database"] != drv.Name() || h.body["status"] != "unavailable" {
				t.Errorf("/healthz of a read-only database: %s", h.raw)
			}
			// Reads still work.
			must(t, b.do(t, "GET", "/v1/jobs", "", nil), 200)
			setReadOnly(false)
			// With no traffic, /healthz's own probe sees writes pass again.
			testwait.Until(t, 20*time.Second, "/healthz healthy again", func() bool {
				return b.do(t, "GET", "/healthz", "", nil).status == 200
			})
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x"}`), 201)
		})
	}
}

// TestDiskFull: SQLite's file capped at its size (max_page_count) fills
// up: the write answers 503 saying the disk is full, /healthz names it;
// once there is room again, a write succeeds and /healthz is healthy.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	d := sqlitetest.Open(t, filepath.Join(t.TempDir(), "full.db"))
	b := setupOn(t, d, nil)
	pages := sqlitetest.SetMaxPages(t, d, 0)
	big := `{"kind":"x","payload":{"pad":"` + strings.Repeat("x", 8000) + `"}}`
	var a answer
	for i := 0; ; i++ {
		if a = b.do(t, "POST", "/v1/jobs", "", big); a.status != 201 {
			break
		}
		if i > 1000 {
			t.Fatalf("a file capped at %d pages took 1000 jobs of 8 kB", pages)
		}
	}
	refused(t, a, "database disk is full")
	h := b.do(t, "GET", "/healthz", "", nil)
	refused(t, h, "database disk is full")
	if h.body["writes"] != "disk_full" {
		t.Errorf("/healthz of a full database: %s", h.raw)
	}
	sqlitetest.SetMaxPages(t, d, 1<<30)
	must(t, b.do(t, "POST", "/v1/jobs", "", big), 201)
	must(t, b.do(t, "GET", "/healthz", "", nil), 200)
}

// TestServeOnReadOnlyDatabase: `skiplock serve` on a PostgreSQL session
// that refuses writes (as a hot standby does) starts, says so on
// /healthz, and answers writes 503 read-only.
func TestServeOnReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	p := startServe(t, t.TempDir(), nil, "--database-url", url+"&options=-c%20default_transaction_read_only%3Don",
		"--listen", "127.0.0.1:0")
	h := request(t, p.url(), "GET", "/healthz", "", nil)
	refused(t, h, "database is read-only")
	if h.body["writes"] != "read_only" {
		t.Errorf("/healthz: %s", h.raw)
	}
	refused(t, request(t, p.url(), "POST", "/v1/jobs", "", `{"kind":"x"}`), "database is read-only")
}
