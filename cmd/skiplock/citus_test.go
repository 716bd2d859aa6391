package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestMigrateUpCitusRefusesBadInput: --citus needs PostgreSQL with the
// citus extension and takes no --steps; --citus-shards needs --citus and a
// sane count. Each says so on one line and exits 2 (1 for a server that
// lacks the extension), and a SQLite file is not even created.
func TestMigrateUpCitusRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "new.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "up", "--citus"}, "--citus: needs a PostgreSQL database"},
		{[]string{"migrate", "up", "--citus", "--steps", "1"}, "--citus: distributes the whole schema"},
		{[]string{"migrate", "up", "--citus-shards", "4"}, "--citus-shards: only with --citus"},
		{[]string{"migrate", "up", "--citus", "--citus-shards", "-1"}, "--citus-shards: must be between 0 and 4096, got -1"},
	} {
		r := runCLI(t, file, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q on one line", c.args, r.code, r.stderr, c.want)
		}
	}
	_, url := pgtest.Schema(t)
	r := runCLI(t, url, "migrate", "up", "--citus")
	if r.code != 1 || !strings.Contains(r.stderr, "the citus extension is not installed") {
		t.Errorf("migrate up --citus without the extension: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestMigrateUpCitusDistributes: on a Citus coordinator (SKIPLOCK_TEST_CITUS_URL)
// migrate up --citus distributes the schema once, and says so in --json.
func TestMigrateUpCitusDistributes(t *testing.T) {
	pgtest.CitusURL(t)
	_, url := pgtest.CitusSchemaMigrated(t)
	for _, want := range []string{"distributed", "already distributed"} {
		r := runCLI(t, url, "migrate", "up", "--citus", "--citus-shards", "2", "--json")
		var got struct {
			Citus string `json:"citus"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || got.Citus != want {
			t.Fatalf("migrate up --citus: exit %d, stdout %q, stderr %q; want citus %q", r.code, r.stdout, r.stderr, want)
		}
	}
}
