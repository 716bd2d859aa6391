package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// cancelledJobs puts n finished (cancelled) jobs in the database at url.
func cancelledJobs(t *testing.T, url string, n int) {
	t.Helper()
	ctx := context.Background()
	db, err := dbopen.OpenExisting(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := skiplock.NewClient(db.Driver, &skiplock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var batch []skiplock.InsertManyParams
	for range n {
		batch = append(batch, skiplock.InsertManyParams{Args: skiplock.RawArgs{KindName: "report", Payload: json.RawMessage(`{"x":1}`)},
			Opts: &skiplock.InsertOpts{Queue: "reports"}})
	}
	if _, err := c.InsertMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if _, err := c.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkCancel, Filter: skiplock.BulkFilter{Queues: []string{"reports"}}}); err != nil {
		t.Fatal(err)
	}
}

// TestCLIVaultExportLsQuery: export copies the finished jobs to a vault
// directory (quiet when piped), a rerun stores nothing again, and ls,
// query and metrics read the files back.
func TestCLIVaultExportLsQuery(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			cancelledJobs(t, url, 30)
			dir := filepath.Join(t.TempDir(), "vault")
			r := runCLI(t, url, "vault", "export", "--vault", dir, "--batch", "10", "--from", "1h", "--json")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("export: %+v", r)
			}
			var exp exportAnswer
			if err := json.Unmarshal([]byte(r.stdout), &exp); err != nil || exp.Stored != 30 || exp.Held != 0 {
				t.Fatalf("export answered %q: %v", r.stdout, err)
			}
			r = runCLI(t, url, "vault", "export", "--vault", dir)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "exported 0 jobs to "+dir+" (30 already there") {
				t.Fatalf("second export: %+v", r)
			}
			r = runCLI(t, url, "vault", "ls", "--vault", dir)
			if r.code != 0 || !strings.Contains(r.stdout, "3 files, 30 jobs") || !strings.Contains(r.stdout, "jobs/date=") {
				t.Fatalf("ls: %+v", r)
			}
			r = runCLI(t, url, "vault", "query", "--vault", dir, "--state", "cancelled", "--limit", "0", "--json")
			var q struct{ Jobs []skiplock.JobView }
			if err := json.Unmarshal([]byte(r.stdout), &q); err != nil || r.code != 0 || len(q.Jobs) != 30 || q.Jobs[0].Kind != "report" {
				t.Fatalf("query: %+v: %v", r, err)
			}
			r = runCLI(t, url, "vault", "query", "--vault", dir, "--state", "completed")
			if r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
				t.Fatalf("query of completed jobs (none): %+v", r)
			}
			r = runCLI(t, url, "vault", "metrics", "--vault", dir)
			if r.code != 0 || !strings.Contains(r.stdout, "reports") || !strings.Contains(r.stdout, " 30 ") {
				t.Fatalf("metrics: %+v", r)
			}
		})
	}
}

// TestCLIVaultBadInput: a missing vault, a bad bound or a bad state is a
// usage error naming the flag.
func TestCLIVaultBadInput(t *testing.T) {
	t.Parallel()
	url := filepath.Join(t.TempDir(), "v.db")
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"vault", "ls"}, "--vault: required"},
		{[]string{"vault", "ls", "--vault", dir, "--from", "yesterday"}, "--from:"},
		{[]string{"vault", "query", "--vault", dir, "--from", "2026-03-02", "--to", "2026-03-01"}, "--to: must be after --from"},
		{[]string{"vault", "query", "--vault", dir, "--state", "pending"}, "--state:"},
		{[]string{"vault", "export", "--vault", dir, "--batch", "0"}, "--batch:"},
		{[]string{"vault", "ls", "--vault", "ftp://x"}, "--vault:"},
	} {
		r := runCLI(t, url, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: %+v, want exit 2 and %q", c.args, r, c.want)
		}
	}
}

// TestServeConfigVault: the vault comes from --vault, SKIPLOCK_VAULT or
// the file's vault key, in that order.
func TestServeConfigVault(t *testing.T) {
	file := filepath.Join(t.TempDir(), "skiplock.yaml")
	if err := os.WriteFile(file, []byte("vault: /data/vault\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func(args ...string) string {
		t.Helper()
		cmd := newServeCmd(&globals{})
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadServeConfig(cmd, flagsOf(cmd), file)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Vault
	}
	if got := load(); got != "/data/vault" {
		t.Fatalf("from the file: %q", got)
	}
	t.Setenv("SKIPLOCK_VAULT", "s3://b/p")
	if got := load(); got != "s3://b/p" {
		t.Fatalf("from the environment: %q", got)
	}
	if got := load("--vault", "/other"); got != "/other" {
		t.Fatalf("from the flag: %q", got)
	}
}

// flagsOf answers the serve flags parsed into cmd.
func flagsOf(cmd *cobra.Command) serveConfig {
	v, _ := cmd.Flags().GetString("vault")
	return serveConfig{Vault: v}
}
