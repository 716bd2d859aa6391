package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCLIIn runs the binary in dir with no --database-url and no
// SKIPLOCK_DATABASE_URL, as an operator in that directory would.
func runCLIIn(t *testing.T, dir string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(cli(t), args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKIPLOCK_DATABASE_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return runCmd(t, cmd)
}

// wantUsage checks exit 2 and one line on stderr holding every want.
func wantUsage(t *testing.T, what string, r cliResult, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	ok := r.code == 2 && len(lines) == 1
	for _, w := range want {
		ok = ok && strings.Contains(r.stderr, w)
	}
	if !ok {
		t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", what, r.code, r.stderr, want)
	}
}

// queueStates answers the names and paused flags of a queues listing (its
// ages move on between two listings).
func queueStates(listing string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			out = append(out, f[0]+" "+f[1])
		}
	}
	return strings.Join(out, ", ")
}

// A typo in a queue name must not pause (or resume) a queue nobody uses.
func TestCLIQueuePauseRefusesUnknownQueue(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			if r := runCLI(t, url, "enqueue", "email", "--queue", "mail"); r.code != 0 {
				t.Fatalf("enqueue: %+v", r)
			}
			before := runCLI(t, url, "queues", "list")
			wantUsage(t, "pause unknown", runCLI(t, url, "queues", "pause", "mial"), `queue "mial"`, "not found", "--create")
			wantUsage(t, "resume unknown", runCLI(t, url, "queues", "resume", "mial"), `queue "mial"`, "not found")
			if after := runCLI(t, url, "queues", "list"); queueStates(after.stdout) != queueStates(before.stdout) || after.code != 0 {
				t.Fatalf("queues list changed by a refused pause:\n%s\nthen\n%s", before.stdout, after.stdout)
			}
			if r := runCLI(t, url, "queues", "pause", "mail"); r.code != 0 {
				t.Fatalf("pause a queue with a job: %+v", r)
			}
			if r := runCLI(t, url, "queues", "pause", "later", "--create"); r.code != 0 || !strings.Contains(r.stdout, "later") {
				t.Fatalf("pause --create: %+v", r)
			}
			r := runCLI(t, url, "queues", "list")
			if !strings.Contains(r.stdout, "later") || strings.Contains(r.stdout, "mial") {
				t.Fatalf("queues list after pause --create: %+v", r)
			}
			if r := runCLI(t, url, "queues", "resume", "later"); r.code != 0 {
				t.Fatalf("resume a created queue: %+v", r)
			}
		})
	}
}

// Commands that only read never create a database file: they say there is
// none and exit 2; commands that write still create it.
func TestCLIReadCommandsNeedADatabase(t *testing.T) {
	t.Parallel()
	reads := [][]string{
		{"jobs", "list"}, {"jobs", "show", "1"}, {"queues", "list"}, {"workflows", "show", "wf"},
		{"schedules", "list"}, {"token", "list"}, {"migrate", "status"},
		{"jobs", "cancel", "1"}, {"queues", "pause", "mail"}, {"token", "revoke", "1"},
		{"schedules", "remove", "k"}, {"migrate", "down"},
	}
	dir := t.TempDir()
	for _, args := range reads {
		wantUsage(t, strings.Join(args, " "), runCLIIn(t, dir, args...), "no database at ./skiplock.db", "skiplock migrate up", "--database-url")
		wantUsage(t, strings.Join(args, " ")+" --database-url", runCLIIn(t, dir, append(args, "--database-url", "other.db")...),
			"no database at ./other.db")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("read commands created %v", entries)
	}
	if r := runCLIIn(t, dir, "enqueue", "email"); r.code != 0 {
		t.Fatalf("enqueue: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "skiplock.db")); err != nil {
		t.Fatalf("enqueue did not create the database: %v", err)
	}
	if r := runCLIIn(t, dir, "jobs", "list"); r.code != 0 || !strings.Contains(r.stdout, "email") {
		t.Fatalf("jobs list on the new database: %+v", r)
	}
}

// An explicit empty --tenant is refused: leaving the flag out is how an
// all-tenant token is made, and it must be a choice, not an accident.
func TestCLITokenCreateRefusesEmptyTenant(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			wantUsage(t, "empty tenant", runCLI(t, url, "token", "create", "--role", "admin", "--tenant", ""),
				"--tenant", "leaving the flag out")
			wantUsage(t, "empty tenant", runCLI(t, url, "token", "create", "--role", "viewer", "--tenant="),
				"--tenant")
			if r := runCLI(t, url, "token", "list"); r.code != 0 || strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 {
				t.Fatalf("a refused token was stored: %+v", r)
			}
			if r := runCLI(t, url, "token", "create", "--role", "admin"); r.code != 0 || !strings.Contains(r.stdout, "all tenants") {
				t.Fatalf("all-tenant token: %+v", r)
			}
		})
	}
}
