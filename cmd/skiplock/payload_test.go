package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCLIStdin is runCLI with stdin fed from r (a pipe) in dir.
func runCLIStdin(t *testing.T, dir, url string, r io.Reader, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(cli(t), append(args, "--database-url", url)...)
	cmd.Dir, cmd.Stdin = dir, r
	return runCmd(t, cmd)
}

func enqueuedPayload(t *testing.T, r cliResult) string {
	t.Helper()
	var got struct {
		Job struct {
			Payload json.RawMessage `json:"payload"`
		} `json:"job"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil {
		t.Fatalf("enqueue: %+v", r)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, got.Job.Payload); err != nil {
		t.Fatalf("payload %s: %v", got.Job.Payload, err)
	}
	return buf.String()
}

// enqueue takes its payload from stdin (-), a file (@FILE) or the argument.
func TestCLIEnqueuePayloadSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := filepath.Join(dir, "p.db")
	if r := runCLI(t, url, "migrate", "up"); r.code != 0 {
		t.Fatalf("migrate: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "job.json"), []byte("{\n  \"from\": \"file\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLIStdin(t, dir, url, strings.NewReader(`{"from":"stdin"}`), "enqueue", "k", "-", "--json")
	if got := enqueuedPayload(t, r); got != `{"from":"stdin"}` {
		t.Errorf("from stdin: payload %s", got)
	}
	r = runCLIStdin(t, dir, url, nil, "enqueue", "k", "@job.json", "--json")
	if got := enqueuedPayload(t, r); got != `{"from":"file"}` {
		t.Errorf("from file: payload %s", got)
	}
	r = runCLIStdin(t, dir, url, nil, "enqueue", "k", `{"from":"arg"}`, "--json")
	if got := enqueuedPayload(t, r); got != `{"from":"arg"}` {
		t.Errorf("from argument: payload %s", got)
	}
	r = runCLIStdin(t, dir, url, nil, "enqueue", "k", "--json")
	if got := enqueuedPayload(t, r); got != `{}` {
		t.Errorf("no payload, stdin /dev/null: payload %s", got)
	}
	// Stdin is read only with -: a job enqueued inside a `while read`
	// loop leaves the loop's input alone.
	r = runCLIStdin(t, dir, url, strings.NewReader(`{"from":"stdin"}`), "enqueue", "k", "--json")
	if got := enqueuedPayload(t, r); got != `{}` {
		t.Errorf("no payload, data on stdin: payload %s, want {} (stdin unread)", got)
	}
}

// A payload source that fails names itself.
func TestCLIEnqueuePayloadSourceErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := filepath.Join(dir, "p.db")
	if r := runCLI(t, url, "migrate", "up"); r.code != 0 {
		t.Fatalf("migrate: %+v", r)
	}
	bad := "{\n  \"a\": 1,\n  \"b\": oops\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	wantUsage(t, "bad stdin", runCLIStdin(t, dir, url, strings.NewReader(bad), "enqueue", "k", "-"),
		"payload from stdin: invalid JSON at line 3")
	wantUsage(t, "bad file", runCLIStdin(t, dir, url, nil, "enqueue", "k", "@bad.json"),
		"payload from bad.json: invalid JSON at line 3")
	wantUsage(t, "missing file", runCLIStdin(t, dir, url, nil, "enqueue", "k", "@nope.json"),
		"payload from nope.json:", "no such file")
	wantUsage(t, "array on stdin", runCLIStdin(t, dir, url, strings.NewReader(`[1]`), "enqueue", "k", "-"),
		"payload from stdin: want a JSON object, got an array")
	wantUsage(t, "empty stdin", runCLIStdin(t, dir, url, strings.NewReader(""), "enqueue", "k", "-"),
		"payload from stdin: empty")
	if r := runCLI(t, url, "jobs", "list", "--json"); strings.Contains(r.stdout, `"kind"`) {
		t.Errorf("a refused enqueue stored a job: %s", r.stdout)
	}
}
