package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestCLIThroughPgBouncer: serve runs through PgBouncer in transaction mode;
// without --listen-database-url it says at start that workers poll, with
// one it names it; commands enqueue and list through the pooler.
func TestCLIThroughPgBouncer(t *testing.T) {
	t.Parallel()
	_, pooled := pgtest.PooledSchema(t, pgdriver.Options{})
	polls := serveLog(t, t.TempDir(), "--database-url", pooled)
	if !strings.Contains(polls, `msg="no LISTEN: workers poll for new jobs"`) {
		t.Errorf("serve through PgBouncer without a listen URL does not say it polls:\n%s", polls)
	}
	listens := serveLog(t, t.TempDir(), "--database-url", pooled, "--listen-database-url", pgtest.PgBouncerDirectURL())
	if strings.Contains(listens, "no LISTEN") || !strings.Contains(listens, "listen_url=") {
		t.Errorf("serve with --listen-database-url:\n%s", listens)
	}
	if r := runCLI(t, pooled, "enqueue", "email", "--queue", "mail"); r.code != 0 {
		t.Fatalf("enqueue through PgBouncer: %+v", r)
	}
	if r := runCLI(t, pooled, "jobs", "list"); r.code != 0 || !strings.Contains(r.stdout, "email") {
		t.Fatalf("jobs list through PgBouncer: %+v", r)
	}
}

// TestCLIListenURLAndPoolsRefused: a listen URL that is not PostgreSQL's,
// and pools a budget cannot hold, are usage errors naming the field.
func TestCLIListenURLAndPoolsRefused(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	dir := t.TempDir()
	r := runCLIIn(t, dir, "serve", "--listen", "127.0.0.1:0", "--database-url", url, "--listen-database-url", "x.db")
	wantUsage(t, "sqlite listen url", r, "--listen-database-url", "is not a postgres:// URL")
	if err := os.WriteFile(filepath.Join(dir, "skiplock.yaml"), []byte("pools: {budget: 3, claims: 2, completions: 2}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLIIn(t, dir, "serve", "--listen", "127.0.0.1:0", "--database-url", url)
	wantUsage(t, "budget too small", r, "pools.budget: 3 connections do not hold claims 2 + completions 2")
}
