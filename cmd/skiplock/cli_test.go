package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/skiplock/skiplock/internal/pgtest"
)

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cli builds the skiplock binary once per test run.
func cli(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "skiplock-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "skiplock")
		out, err := exec.Command("go", "build", "-o", cliPath, ".").CombinedOutput()
		if err != nil {
			cliErr = err
			t.Logf("%s", out)
		}
	})
	if cliErr != nil {
		t.Fatalf("build skiplock: %v", cliErr)
	}
	return cliPath
}

type cliResult struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, url string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(cli(t), append(args, "--database-url", url)...)
	cmd.Dir = t.TempDir()
	return runCmd(t, cmd)
}

// runCmd runs cmd and answers its exit code and output.
func runCmd(t *testing.T, cmd *exec.Cmd) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// cliDatabases are the databases the CLI tests run on.
func cliDatabases(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"postgres": func(t *testing.T) string {
			_, url := pgtest.Schema(t)
			return url
		},
		"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "cli.db") },
	}
}

// migrated opens a database of cliDatabases with its schema applied.
func migrated(t *testing.T, open func(t *testing.T) string) string {
	t.Helper()
	url := open(t)
	if r := runCLI(t, url, "migrate", "up"); r.code != 0 {
		t.Fatalf("migrate: %+v", r)
	}
	return url
}

func TestCLIJobLifecycle(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			r := runCLI(t, url, "enqueue", "email", `{"to":"a@b.c"}`, "--queue", "mail", "--priority", "8", "--json")
			if r.code != 0 {
				t.Fatalf("enqueue: %+v", r)
			}
			var got struct {
				Job struct {
					ID       int64  `json:"id"`
					State    string `json:"state"`
					Priority int    `json:"priority"`
				} `json:"job"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Job.Priority != 8 || got.Job.State != "pending" {
				t.Fatalf("enqueue output %q: %v", r.stdout, err)
			}
			id := strconv.FormatInt(got.Job.ID, 10)
			if r := runCLI(t, url, "jobs", "list", "--queue", "mail"); r.code != 0 || !strings.Contains(r.stdout, "email") {
				t.Fatalf("list: %+v", r)
			}
			if r := runCLI(t, url, "queues", "pause", "mail"); r.code != 0 {
				t.Fatalf("pause: %+v", r)
			}
			if r := runCLI(t, url, "queues", "list"); !strings.Contains(r.stdout, "mail") || !strings.Contains(r.stdout, "true") {
				t.Fatalf("queues list: %+v", r)
			}
			if r := runCLI(t, url, "jobs", "cancel", id); r.code != 0 || !strings.HasPrefix(r.stdout, "job "+id+" cancelled: cancelled") {
				t.Fatalf("cancel: %+v", r)
			}
			if r := runCLI(t, url, "jobs", "retry", id); r.code != 0 || !strings.HasPrefix(r.stdout, "job "+id+" retried: pending") {
				t.Fatalf("retry: %+v", r)
			}
			dup := runCLI(t, url, "enqueue", "email", "--idempotency-key", "k")
			dup2 := runCLI(t, url, "enqueue", "email", "--idempotency-key", "k")
			if dup.code != 0 || !strings.Contains(dup2.stdout, "duplicate") {
				t.Fatalf("idempotency: %+v %+v", dup, dup2)
			}
		})
	}
}

// Bad input exits 2 with one line on stderr naming the problem.
func TestCLIBadInputExitsTwo(t *testing.T) {
	t.Parallel()
	url := filepath.Join(t.TempDir(), "bad.db")
	cases := map[string][]string{
		"priority":               {"enqueue", "k", "--priority", "11"},
		"PAYLOAD":                {"enqueue", "k", "{not json"},
		"not a job":              {"jobs", "show", "abc"},
		"not found":              {"jobs", "show", "12345"},
		"--state":                {"jobs", "list", "--state", "bogus"},
		"accepts":                {"jobs", "show"},
		"unknown":                {"jobs", "list", "--bogus"},
		"--delay":                {"enqueue", "k", "--delay", "-1s"},
		"depends-on":             {"enqueue", "k", "--depends-on", "x"},
		"run-at":                 {"enqueue", "k", "--run-at", "tomorrow"},
		"--steps":                {"migrate", "up", "--steps", "-1"},
		"contracts":              {"contracts", "check", "/does/not/exist.yaml"},
		"job 999: not found":     {"jobs", "cancel", "999"},
		"payload":                {"enqueue", "k", "[1,2]"},
		"max_retries":            {"enqueue", "k", "--max-retries", "-2"},
		"not valid UTF-8":        {"enqueue", "k", "{\"a\":\"\xff\"}"},
		"out of range":           {"enqueue", "k", `{"a":1e400}`},
		"must be a JSON object":  {"enqueue", "k", "null"},
		"--tag":                  {"enqueue", "k", "{}", "--tag="},
		"tags[1]":                {"enqueue", "k", "{}", "--tag", "a,"},
		"is a directory":         {"enqueue", "k", "@" + os.TempDir()},
		"--jsonl":                {"enqueue", "--jsonl", os.TempDir()},
		"--listen":               {"serve", "--listen", "127.0.0.1:99999"},
		"--server":               {"worker", "--queue", "q", "--exec", "true", "--server", "garbage"},
		"--lease":                {"worker", "--queue", "q", "--exec", "true", "--lease", "1000h"},
		"--kill-grace":           {"worker", "--queue", "q", "--exec", "true", "--kill-grace", "-1s"},
		"--jobs":                 {"bench", "--jobs", "0"},
		"at least 1 for down":    {"migrate", "down", "--steps", "0"},
		"does not exist":         {"vault", "ls", "--vault", filepath.Join(os.TempDir(), "skiplock-no-such-vault")},
		"queue: must be at most": {"queues", "pause", strings.Repeat("q", 300), "--create"},
		"--tenant: empty":        {"jobs", "cancel", "--tenant", ""},
	}
	runCLI(t, url, "migrate", "up")
	for want, args := range cases {
		r := runCLI(t, url, args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", args, r.code, r.stderr, want)
		}
	}
	r := runCLI(t, "mysql://x", "jobs", "list")
	if r.code != 2 || !strings.Contains(r.stderr, "--database-url") {
		t.Errorf("bad url: %+v", r)
	}
}

// `migrate up` on a new SQLite file names the steps it applied (the open
// applies them), and a second run has nothing to do.
func TestMigrateUpNewSQLiteFile(t *testing.T) {
	t.Parallel()
	url := filepath.Join(t.TempDir(), "new.db")
	r := runCLI(t, url, "migrate", "up")
	if r.code != 0 || !strings.Contains(r.stdout, "migrate up: 001_") || strings.Contains(r.stdout, "nothing to do") {
		t.Fatalf("migrate up on a new file: %+v, want the steps applied", r)
	}
	if r := runCLI(t, url, "migrate", "up"); r.code != 0 || strings.TrimSpace(r.stdout) != "migrate up: nothing to do" {
		t.Fatalf("migrate up again: %+v, want nothing to do", r)
	}
	// Every step reverted, a command says what to do.
	if r := runCLI(t, url, "migrate", "down", "--steps", "1000"); r.code != 0 {
		t.Fatalf("migrate down every step: %+v", r)
	}
	if r := runCLI(t, url, "jobs", "list"); r.code == 0 || !strings.Contains(r.stderr, "run 'skiplock migrate up'") {
		t.Fatalf("jobs list on a file with no tables: %+v, want a hint to migrate", r)
	}
}
