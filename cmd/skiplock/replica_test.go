package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// A read replica URL that cannot serve exits 2 with one line naming
// --read-database-url: not postgres://, beside a SQLite database, or with
// nothing listening; serve refuses it before it listens.
func TestCLIReadDatabaseURLRefused(t *testing.T) {
	t.Parallel()
	_, pg := pgtest.Schema(t)
	sqlite := filepath.Join(t.TempDir(), "cli.db")
	cases := []struct {
		url  string
		args []string
		want string
	}{
		{pg, []string{"jobs", "list", "--read-database-url", "sqlite:other.db"}, "--read-database-url: read database url \"sqlite:other.db\": want postgres://"},
		{sqlite, []string{"jobs", "list", "--read-database-url", pg}, "is SQLite, which has no replica"},
		{pg, []string{"jobs", "list", "--read-database-url", "postgres://postgres@127.0.0.1:1/test?sslmode=disable"}, "read database url: connection refused at 127.0.0.1:1"},
		{sqlite, []string{"serve", "--listen", "127.0.0.1:0", "--read-database-url", "mysql://x"}, "--read-database-url: read database url \"mysql://x\""},
	}
	for _, c := range cases {
		r := runCLI(t, c.url, c.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
