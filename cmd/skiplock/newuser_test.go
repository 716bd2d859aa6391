package main

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/dbopen"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestCLISchedulePayloadRefused: `schedules add --payload` that is no JSON
// object exits 2 with the library's error naming payload, and stores
// nothing (it was stored, then skipped at every run).
func TestCLISchedulePayloadRefused(t *testing.T) {
	t.Parallel()
	url := migrated(t, cliDatabases(t)["sqlite"])
	for _, payload := range []string{`[1]`, `"x"`, `{"a":`} {
		wantUsage(t, "payload "+payload, runCLI(t, url, "schedules", "add", "k", "--kind", "x", "--every", "1h", "--payload", payload), "payload: ")
	}
	if r := runCLI(t, url, "schedules", "list", "--json"); r.code != 0 || strings.Contains(r.stdout, `"key"`) {
		t.Fatalf("refused schedules stored: %+v", r)
	}
	if r := runCLI(t, url, "schedules", "add", "k", "--kind", "x", "--every", "1h", "--payload", `{"a":1}`); r.code != 0 {
		t.Fatalf("an object payload: %+v", r)
	}
}

// TestCLIJSONLBadLines: a bad line of `enqueue --jsonl` says what is wrong
// with it: invalid JSON with its column, or what it is instead of an object.
func TestCLIJSONLBadLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := filepath.Join(dir, "j.db")
	for _, c := range []struct{ line, want string }{
		{`{"kind":"b",`, "line 2: invalid JSON at column 13: unexpected end of JSON input (nothing was inserted)"},
		{`{"kind":"b" "queue":"q"}`, "line 2: invalid JSON at column 13: invalid character '\"' after object key:value pair"},
		{`[1]`, "line 2: must be a JSON object, got an array (nothing was inserted)"},
		{`{"kind":"b","payload":[1]}`, "line 2: payload: must be a JSON object"},
	} {
		r := runCLIStdin(t, dir, url, strings.NewReader("{\"kind\":\"a\"}\n"+c.line+"\n"), "enqueue", "--jsonl", "-")
		wantUsage(t, c.line, r, c.want)
		if strings.Contains(r.stderr, ": :") {
			t.Errorf("%s: an empty field name in %q", c.line, r.stderr)
		}
	}
}

// TestCLIMessages: the wording a new user met — no "(0 jobs deleted
// before)", typo suggestions for commands and flags, "-" for the oldest
// pending job of a queue that has none.
func TestCLIMessages(t *testing.T) {
	t.Parallel()
	url := migrated(t, cliDatabases(t)["sqlite"])
	if r := runCLI(t, url, "enqueue", "a", "--queue", "q"); r.code != 0 {
		t.Fatalf("enqueue: %+v", r)
	}
	r := runCLI(t, url, "jobs", "delete", "--state", "pending")
	wantUsage(t, "delete --state pending", r, `delete acts on completed, failed, cancelled jobs, not "pending"`)
	if strings.Contains(r.stderr, "before") {
		t.Errorf("delete --state pending: %q speaks of jobs deleted before", r.stderr)
	}
	wantUsage(t, "jobs get", runCLI(t, url, "jobs", "get", "1"), `did you mean "show"?`)
	wantUsage(t, "--stat", runCLI(t, url, "jobs", "list", "--stat", "pending"), "unknown flag --stat", "did you mean --state?")
	wantUsage(t, "--stat=", runCLI(t, url, "jobs", "list", "--stat=pending"), "did you mean --state?")
	wantUsage(t, "--prio", runCLI(t, url, "enqueue", "a", "--prio", "3"), "did you mean --priority?")
	wantUsage(t, "--zzzz", runCLI(t, url, "jobs", "list", "--zzzz"), "unknown flag --zzzz", "--help")

	if r := runCLI(t, url, "queues", "pause", "empty", "--create"); r.code != 0 {
		t.Fatalf("pause --create: %+v", r)
	}
	r = runCLI(t, url, "queues", "list")
	rows := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		f := strings.Fields(l)
		if len(f) == 7 {
			rows[f[0]] = f
		}
	}
	if got := rows["empty"]; got == nil || got[6] != "-" {
		t.Errorf("queues list: the empty queue's OLDEST_PENDING is %v, want -:\n%s", got, r.stdout)
	}
	if got := rows["q"]; got == nil || got[6] == "-" || !strings.HasSuffix(got[6], "s") {
		t.Errorf("queues list: a queue with a pending job shows %v, want its age:\n%s", got, r.stdout)
	}
}

// TestCLIJSONErrors: with --json an error is the API's error body on
// stderr, one line, and bad input still exits 2.
func TestCLIJSONErrors(t *testing.T) {
	t.Parallel()
	url := migrated(t, cliDatabases(t)["sqlite"])
	for _, c := range []struct {
		args              []string
		code, field, text string
	}{
		{[]string{"jobs", "list", "--state", "bogus", "--json"}, "invalid_argument", "state", "unknown state"},
		{[]string{"jobs", "show", "99", "--json"}, "not_found", "", "job 99"},
		{[]string{"enqueue", "a", "[1]", "--json"}, "invalid_argument", "payload", "must be a JSON object"},
		{[]string{"schedules", "add", "k", "--kind", "x", "--every", "1h", "--payload", "[1]", "--json"}, "invalid_argument", "payload", "must be a JSON object"},
		{[]string{"jobs", "list", "--json", "--stat", "x"}, "invalid_argument", "", "did you mean --state?"},
	} {
		r := runCLI(t, url, c.args...)
		var body struct {
			Error struct{ Code, Message, Field string }
		}
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &body) != nil || body.Error.Code != c.code ||
			body.Error.Field != c.field || !strings.Contains(body.Error.Message, c.text) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and {\"error\":{\"code\":%q,…,\"field\":%q}}", c.args, r.code, r.stderr, c.code, c.field)
		}
	}
}

// TestCLIBadDatabaseURL: a PostgreSQL URL naming no database, an unknown
// role, or a port where nothing listens exits 2 with one line that says
// so, as docs/cli.md says of a bad URL.
func TestCLIBadDatabaseURL(t *testing.T) {
	t.Parallel()
	base, err := url.Parse(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	noDB := *base
	noDB.Path = "/skiplock_no_such_database"
	noRole := *base
	noRole.User = url.User("skiplock_no_such_role")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := *base
	closed.Host = ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, c := range []struct {
		url  url.URL
		want string
	}{
		{noDB, `database "skiplock_no_such_database" does not exist`},
		{noRole, `role "skiplock_no_such_role" does not exist`},
		{closed, "connection refused at " + closed.Host},
	} {
		for _, args := range [][]string{{"jobs", "list"}, {"enqueue", "a"}, {"migrate", "up"}} {
			r := runCLI(t, c.url.String(), args...)
			if r.code == 1 && strings.Contains(r.stderr, "SQLSTATE 28P01") {
				t.Skipf("the test server asks for passwords: %s", r.stderr)
			}
			wantUsage(t, strings.Join(args, " ")+" on "+c.url.Redacted(), r, "skiplock: database url: ", c.want)
		}
	}
}

// TestCLIServeRefusedCreatesNothing: serve on a public address without
// tokens is refused before any database file is made.
func TestCLIServeRefusedCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(cli(t), "serve", "--listen", "0.0.0.0:0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SKIPLOCK_DATABASE_URL=", "SKIPLOCK_INSECURE=", "SKIPLOCK_LISTEN=", "SKIPLOCK_CONFIG=")
	r := runCmd(t, cmd)
	if r.code != 2 || !strings.Contains(r.stderr, "refusing to serve 0.0.0.0:0 without tokens") {
		t.Fatalf("serve: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "skiplock.db")); !os.IsNotExist(err) {
		t.Errorf("a refused serve left skiplock.db behind (%v)", err)
	}
}

// TestCLIContractsApplyCreatesDatabase: contracts apply in a fresh
// directory creates the database, as the other writing commands do.
func TestCLIContractsApplyCreatesDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(file, []byte("version: 1\nkinds:\n  file: {queue: ingest}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := filepath.Join(dir, "fresh.db")
	if r := runCLI(t, url, "contracts", "apply", file); r.code != 0 || !strings.Contains(r.stdout, "version 1 applied") {
		t.Fatalf("apply on a fresh directory: %+v", r)
	}
	if r := runCLI(t, url, "enqueue", "file"); r.code != 0 || !strings.Contains(r.stdout, "queue=ingest") {
		t.Fatalf("enqueue under the applied contracts: %+v", r)
	}
}

// TestCLIWorkerHelp: the HTTP worker's help lists no flag it ignores
// (--database-url: it reaches the database through --server).
func TestCLIWorkerHelp(t *testing.T) {
	t.Parallel()
	r := runCmd(t, exec.Command(cli(t), "worker", "--help"))
	if r.code != 0 || !strings.Contains(r.stdout, "--server") || strings.Contains(r.stdout, "database-url") {
		t.Errorf("worker --help: %+v", r)
	}
}

// TestCLIVaultFilesCarryVersion: the Parquet files of the vault name the
// version that wrote them in created_by.
func TestCLIVaultFilesCarryVersion(t *testing.T) {
	t.Parallel()
	url := migrated(t, cliDatabases(t)["sqlite"])
	cancelledJobs(t, url, 3)
	dir := filepath.Join(t.TempDir(), "vault")
	if r := runCLI(t, url, "vault", "export", "--vault", dir, "--from", "1h"); r.code != 0 {
		t.Fatalf("export: %+v", r)
	}
	var build buildInfo
	if r := runCLI(t, url, "version", "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &build) != nil {
		t.Fatalf("version: %+v", r)
	}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			return err
		}
		files++
		// parquet-go writes "APP version V(build B)".
		if got, want := pf.Metadata().CreatedBy, "skiplock version "+build.Version+"(build "+build.Commit+")"; got != want {
			t.Errorf("%s: created_by %q, want %q", path, got, want)
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("read the vault's files: %d files, %v", files, err)
	}
}

// failedOnLastAttempt stores a job of kind with no retries and fails its
// only attempt with an error that allowed a retry.
func failedOnLastAttempt(t *testing.T, url, kind string) int64 {
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
	none := 0
	res, err := c.Insert(ctx, skiplock.RawArgs{KindName: kind, Payload: json.RawMessage(`{}`)},
		&skiplock.InsertOpts{Queue: kind, MaxRetries: &none})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(ctx, skiplock.ClaimParams{Queue: kind, WorkerID: "w", Max: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fail(ctx, res.Job.ID, skiplock.FailParams{WorkerID: "w", ErrorType: "exit_1", Message: "exit status 1", Retryable: true}); err != nil {
		t.Fatal(err)
	}
	return res.Job.ID
}

// TestCLIAttempts: the CLI counts attempts as the dashboard does, attempt
// N of M with M = max_retries + 1, and says an exit 1 on the last attempt
// exhausted the retries (not "not retryable").
func TestCLIAttempts(t *testing.T) {
	t.Parallel()
	url := migrated(t, cliDatabases(t)["sqlite"])
	id := strconv.FormatInt(failedOnLastAttempt(t, url, "exit1"), 10)
	r := runCLI(t, url, "jobs", "show", id)
	for _, want := range []string{"failed (attempt 1 of 1)", "max retries", "0 (runs allowed: 1)", "exit status 1 (attempt 1: retries exhausted)"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("jobs show: %q lacks %q", r.stdout, want)
		}
	}
	if r := runCLI(t, url, "jobs", "list", "--kind", "exit1"); !strings.Contains(r.stdout, " 1/1 ") {
		t.Errorf("jobs list: want ATTEMPT 1/1:\n%s", r.stdout)
	}
	if r := runCLI(t, url, "jobs", "retry", id); r.code != 0 || !strings.Contains(r.stdout, "pending (next attempt 2 of 2)") {
		t.Errorf("jobs retry: %+v", r)
	}
}
