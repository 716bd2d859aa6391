package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"
)

// run runs the skiplock binary and answers its stdout and exit code.
func run(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, skiplockBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestServeConfig: no database flag serves ./skiplock.db, created and
// migrated; the file, the environment and flags apply in that order; a
// public address without tokens is refused.
func TestServeConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "skiplock.yaml"), []byte("listen: 127.0.0.1:1\nlog_level: info\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, []string{"SKIPLOCK_LISTEN=127.0.0.1:0", "SKIPLOCK_DATABASE_URL="})
	if !strings.HasPrefix(p.addr, "127.0.0.1:") || p.addr == "127.0.0.1:1" {
		t.Fatalf("environment did not override the file: %s", p.addr)
	}
	must(t, request(t, p.url(), "GET", "/healthz", "", nil), 200)
	if _, err := os.Stat(filepath.Join(dir, "skiplock.db")); err != nil {
		t.Fatalf("default database: %v", err)
	}
	// The auth line follows the listening line, which startServe waited
	// for: the log is read as the server writes it.
	for _, want := range []string{"msg=database driver=sqlite", "msg=listening", "msg=auth mode=open"} {
		testwait.Until(t, 30*time.Second, fmt.Sprintf("the start-up log to have %q", want), func() bool {
			return strings.Contains(p.logs(), want)
		})
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	if p.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("SIGTERM: exit %d: %s", p.cmd.ProcessState.ExitCode(), p.logs())
	}
	for _, args := range [][]string{{"serve", "--listen", "0.0.0.0:0"}, {"serve", "--listen", "nonsense"},
		{"serve", "--config", "missing.yaml"}, {"serve", "--database-url", "mysql://x"}} {
		if _, stderr, code := run(t, dir, nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// TestTokenCommands: create prints the token last; the server takes it;
// list and revoke.
func TestTokenCommands(t *testing.T) {
	dir := t.TempDir()
	env := []string{"SKIPLOCK_DATABASE_URL=" + filepath.Join(dir, "t.db")}
	out, stderr, code := run(t, dir, env, "token", "create", "--role", "producer", "--tenant", "acme", "--name", "ci")
	if code != 0 {
		t.Fatalf("token create: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	if !strings.HasPrefix(token, "skl_") {
		t.Fatalf("last line is not a token: %q", out)
	}
	p := startServe(t, dir, env, "--listen", "127.0.0.1:0")
	must(t, request(t, p.url(), "GET", "/v1/jobs", "", nil), 401)
	j := must(t, request(t, p.url(), "POST", "/v1/jobs", token, `{"kind":"x"}`), 201).job()
	if j["tenant"] != "acme" {
		t.Fatalf("job of an acme token: %v", j)
	}
	must(t, request(t, p.url(), "POST", "/v1/queues/default/claim", token, `{"worker_id":"w"}`), 403)
	out, _, _ = run(t, dir, env, "token", "list")
	if !strings.Contains(out, "producer") || !strings.Contains(out, "acme") || strings.Contains(out, token) {
		t.Fatalf("token list: %s", out)
	}
	if _, stderr, code := run(t, dir, env, "token", "revoke", "1"); code != 0 {
		t.Fatalf("revoke: %s", stderr)
	}
	for _, args := range [][]string{{"token", "create", "--role", "root"}, {"token", "revoke", "x"}, {"token", "revoke", "99"}} {
		if _, stderr, code := run(t, dir, env, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// TestWorkerCommand: `skiplock worker` runs a command per job: results,
// failures, retry-later, cancellation and draining.
func TestWorkerCommand(t *testing.T) {
	b := setup(t, databases[0], nil)
	dir := t.TempDir()
	script := `case "$SKIPLOCK_JOB_KIND" in
ok) read p; echo "{\"got\":$p,\"attempt\":$SKIPLOCK_JOB_ATTEMPT,\"id\":$SKIPLOCK_JOB_ID}";;
text) echo "plain words";;
bad) echo "boom at line 1" >&2; exit 3;;
later) exit 75;;
slow) trap 'echo stopped >&2; exit 1' TERM; while true; do sleep 0.1; done;;
esac`
	if err := os.WriteFile(filepath.Join(dir, "job.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	enq := func(kind string) int64 {
		return id(must(t, b.do(t, "POST", "/v1/jobs", "", fmt.Sprintf(`{"kind":%q,"queue":"sh","payload":{"n":7}}`, kind)), 201).job())
	}
	ids := map[string]int64{}
	for _, k := range []string{"ok", "text", "bad", "later", "slow"} {
		ids[k] = enq(k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, skiplockBinary(t), "worker", "--server", b.ts.URL, "--queue", "sh",
		"--exec", "sh "+filepath.Join(dir, "job.sh"), "--concurrency", "3", "--lease", "3s", "--wait", "1s",
		"--kill-grace", "5s")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	job := func(id int64) map[string]any {
		return must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", id), "", nil), 200).job()
	}
	waitState := func(id int64, states ...string) map[string]any {
		for range 600 {
			j := job(id)
			for _, s := range states {
				if j["state"] == s {
					return j
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("job %d never became %v: %v\n%s", id, states, job(id), logs.String())
		return nil
	}
	res := waitState(ids["ok"], "completed")["result"].(map[string]any)
	if res["got"].(map[string]any)["n"] != 7.0 || res["attempt"] != 1.0 || res["id"] != float64(ids["ok"]) {
		t.Fatalf("result: %v", res)
	}
	if r := waitState(ids["text"], "completed")["result"]; r != "plain words" {
		t.Fatalf("text result: %v", r)
	}
	bad := waitState(ids["bad"], "scheduled")
	if e := bad["errors"].([]any)[0].(map[string]any); !strings.Contains(e["message"].(string), "boom at line 1") || e["type"] != "exit_status_3" {
		t.Fatalf("failure: %v", e)
	}
	if e := waitState(ids["later"], "scheduled")["errors"].([]any)[0].(map[string]any); e["type"] != "retry_later" {
		t.Fatalf("exit 75: %v", e)
	}
	waitState(ids["slow"], "running")
	must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", ids["slow"]), "", nil), 200)
	waitState(ids["slow"], "cancelled")
	// Drain: SIGTERM lets a running command finish, then the worker exits.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("worker after SIGTERM: %v\n%s", err, logs.String())
	}
}

// TestWorkerCommandDrainsWhileWaiting: SIGTERM to an idle `skiplock worker`
// ends its waiting claim: the worker exits without sitting out the long
// poll (here 60 s), and the server stops waiting for it too: a job inserted
// after it left is not claimed for it.
func TestWorkerCommandDrainsWhileWaiting(t *testing.T) {
	b := setup(t, databases[0], nil)
	// The worker talks to the server through a handler that counts its long
	// polls (claims with a wait) in flight: SIGTERM goes once one is at the
	// server, not after a guessed sleep. Such a claim comes after the
	// worker's first claim, so after it started and handles SIGTERM; a
	// signal sooner could come before that and kill it.
	var polls atomic.Int64
	h := b.srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/claim") {
			raw, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(raw))
			var body struct {
				Wait float64 `json:"wait_seconds"`
			}
			if json.Unmarshal(raw, &body) == nil && body.Wait > 0 {
				polls.Add(1)
				defer polls.Add(-1)
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	cmd := exec.Command(skiplockBinary(t), "worker", "--server", ts.URL, "--queue", "idle",
		"--exec", "cat", "--wait", "60s")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited }) // before ts.Close, which waits for the poll
	testwait.Until(t, 60*time.Second, "the worker's long poll at the server", func() bool {
		select {
		case <-exited:
			t.Fatalf("the worker exited before its long poll: %v\n%s", waitErr, logs.String())
		default:
		}
		return polls.Load() > 0
	})
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("worker after SIGTERM: %v\n%s", waitErr, logs.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("the worker still waited on its claim 30 s after SIGTERM\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("a drain logged a warning:\n%s", logs.String())
	}
	j := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"k","queue":"idle","payload":{}}`), 201).job()
	// A claim still waiting would take the job within milliseconds of its
	// insert (this server wakes its own waiting claims).
	for range 20 {
		if got := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", id(j)), "", nil), 200).job(); got["state"] != "pending" {
			t.Fatalf("a job inserted after the worker left: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
