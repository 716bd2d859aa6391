package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// restoreFixture is the vault package's vault written by an earlier run:
// 12 jobs (completed, failed, cancelled) in queues ingest and mail.
func restoreFixture(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "vault", "testdata", "restore"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCLIVaultRestore: a dry run changes nothing; a restore into the
// archive puts every job back, a second one skips them all; into the queue
// the jobs now archived are skipped too.
func TestCLIVaultRestore(t *testing.T) {
	t.Parallel()
	dir := restoreFixture(t)
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			answer := func(args ...string) restoreAnswer {
				t.Helper()
				r := runCLI(t, url, append([]string{"vault", "restore", "--vault", dir, "--json"}, args...)...)
				var a restoreAnswer
				if err := json.Unmarshal([]byte(r.stdout), &a); err != nil || r.code != 0 || r.stderr != "" {
					t.Fatalf("restore %v: %+v: %v", args, r, err)
				}
				return a
			}
			if a := answer("--into", "archive", "--dry-run"); !a.DryRun || a.Matched != 12 || a.Restored != 12 {
				t.Fatalf("dry run: %+v, want 12 that would be restored", a)
			}
			if a := answer("--into", "archive", "--batch", "5"); a.Matched != 12 || a.Restored != 12 || a.Skipped != 0 {
				t.Fatalf("restore: %+v, want 12 restored (the dry run stored nothing)", a)
			}
			r := runCLI(t, url, "vault", "restore", "--vault", dir, "--into", "archive")
			if r.code != 0 || !strings.HasPrefix(r.stdout, "restored 0 jobs into the archive from "+dir+" (skipped: in the database 12; 12 jobs matched)") {
				t.Fatalf("second restore: %+v", r)
			}
			if a := answer("--into", "queue", "--queue", "mail"); a.Restored != 0 || a.Skipped != a.Matched || a.Matched == 0 {
				t.Fatalf("restore into the queue of archived jobs: %+v, want all skipped", a)
			}
			r = runCLI(t, url, "jobs", "show", "1", "--json")
			if r.code != 0 || !strings.Contains(r.stdout, `"kind": "file"`) {
				t.Fatalf("jobs show of a restored job: %+v", r)
			}
		})
	}
}

// TestCLIVaultRestoreBadInput: bad flags exit 2 with one line and make no
// database.
func TestCLIVaultRestoreBadInput(t *testing.T) {
	t.Parallel()
	url := filepath.Join(t.TempDir(), "v.db")
	dir := restoreFixture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--vault", dir}, "--into: must be queue or archive"},
		{[]string{"--vault", dir, "--into", "live"}, "--into: must be queue or archive"},
		{[]string{"--vault", dir, "--into", "archive", "--state", "pending"}, "--state:"},
		{[]string{"--vault", dir, "--into", "queue", "--state", "completed"}, "--state: a completed job is not retried"},
		{[]string{"--vault", dir, "--into", "queue", "--from", "soon"}, "--from:"},
		{[]string{"--vault", dir, "--into", "queue", "--batch", "0"}, "--batch:"},
		{[]string{"--vault", filepath.Join(dir, "missing"), "--into", "queue"}, "--vault:"},
		{[]string{"--into", "queue"}, "--vault: required"},
	} {
		r := runCLI(t, url, append([]string{"vault", "restore"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: %+v, want exit 2 and %q", c.args, r, c.want)
		}
	}
	if _, err := os.Stat(url); !os.IsNotExist(err) {
		t.Fatalf("bad input made the database %s: %v", url, err)
	}
	// A dry run makes no database; a restore makes one, as enqueue does.
	r := runCLI(t, url, "vault", "restore", "--vault", dir, "--into", "queue", "--dry-run")
	if r.code != 2 || !strings.Contains(r.stderr, "no database at") {
		t.Fatalf("dry run on no database: %+v", r)
	}
	r = runCLI(t, url, "vault", "restore", "--vault", dir, "--into", "queue")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "restored 5 jobs into the queue") {
		t.Fatalf("restore into a new database: %+v", r)
	}
	r = runCLI(t, url, "jobs", "list", "--state", "pending", "--json")
	if r.code != 0 || strings.Count(r.stdout, `"state": "pending"`) != 5 {
		t.Fatalf("jobs list after the restore: %+v", r)
	}
}
