package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"
)

// A busy port exits 2 naming --listen, before any database file exists.
func TestCLIServeBusyPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "busy.db")
	r := runCLIIn(t, dir, "serve", "--listen", ln.Addr().String(), "--database-url", db)
	wantUsage(t, "busy port", r, "address "+ln.Addr().String()+" is in use", "--listen 127.0.0.1:")
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("serve on a busy port created %s (stat: %v)", db, err)
	}
}

// syncBuffer is a bytes.Buffer the test reads while the process writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveLog starts serve in dir, waits until it listens, stops it and
// answers what it logged.
func serveLog(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return serveLogEnv(t, dir, nil, args...)
}

// serveLogEnv is serveLog with env added to the process's environment.
func serveLogEnv(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(cli(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--database-url", filepath.Join(dir, "s.db")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	testwait.Until(t, 30*time.Second, "serve listening", func() bool {
		select {
		case <-done:
			exited = true
			return true
		default:
		}
		return strings.Contains(log.String(), "msg=listening")
	})
	if exited {
		t.Fatalf("serve exited: %s", log.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-done
	return log.String()
}

// serve says at start which config file, contracts, periodic jobs, flow
// rules and fairness weights it uses.
func TestCLIServeLogsItsConfiguration(t *testing.T) {
	t.Parallel()
	bare := serveLog(t, t.TempDir())
	for _, want := range []string{"config file", "none", `msg="flow rules" count=0`, "msg=fairness queues=0"} {
		if !strings.Contains(bare, want) {
			t.Errorf("no config file: log lacks %q:\n%s", want, bare)
		}
	}
	dir := t.TempDir()
	contracts := "version: 1\nkinds:\n  email: {}\n  report: {}\n"
	config := "contracts: c.yaml\nperiodic:\n  - {name: nightly, schedule: \"0 3 * * *\", kind: report}\n" +
		"flow:\n  - {name: per-host, queue: crawl, key: payload.host, concurrency: 2, rate: 5, per: 1s}\n" +
		"fairness:\n  crawl: {weights: {acme: 3, beta: 1}}\n"
	for name, body := range map[string]string{"c.yaml": contracts, "skiplock.yaml": config} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := serveLog(t, dir)
	for _, want := range []string{"file=skiplock.yaml", "file=c.yaml", "email", "report", "name=nightly", `schedule="0 3 * * *"`,
		`msg="flow rule" name=per-host queue=crawl kind=any key=payload.host limit="2 running, 5 per 1s"`,
		`msg=fairness queue=crawl weights="acme=3,beta=1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}

// A YAML error in the config file reads as its first line, with the place,
// followed by the excerpt of the file, each on its own line.
func TestCLIServeConfigYAMLErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ file, first, excerpt string }{
		{"listen: 127.0.0.1:0\nbogus: 1\n", `skiplock: config file skiplock.yaml: line 2, column 1: unknown field "bogus" (known: database_url, listen,`, "bogus: 1"},
		{"periodic:\n  - name: a\n    schedule: \"* * * * *\"\n   kind: x\n", "skiplock: config file skiplock.yaml: line 4, column 4: ", "kind: x"},
		{"max_payload_bytes: abc\n", "skiplock: config file skiplock.yaml: line 1, column 20: want an integer, got a string", "max_payload_bytes: abc"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "skiplock.yaml"), []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLIIn(t, dir, "serve", "--database-url", filepath.Join(dir, "s.db"))
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != 2 || !strings.HasPrefix(lines[0], c.first) || len(lines) < 2 || !strings.Contains(strings.Join(lines[1:], "\n"), c.excerpt) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant 2, first line %q, then an excerpt with %q", c.file, r.code, r.stderr, c.first, c.excerpt)
		}
	}
}
