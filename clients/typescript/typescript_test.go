// Package typescript_test runs the TypeScript client's checks and tests
// from `go test`: npm ci, the generated types against docs/openapi.yaml,
// the committed build against src/, and the Node test suite (test/) against real `skiplock serve`
// processes on SQLite and, when SKIPLOCK_TEST_DATABASE_URL is set, on
// PostgreSQL.
package typescript_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// contracts give kind "flaky" the short backoff the retry test waits for.
const contracts = `version: 1
kinds:
  flaky:
    max_retries: 2
    backoff: {type: fixed, delay: 1s}
`

func TestTypeScriptClient(t *testing.T) {
	node, npm := tool(t, "node"), tool(t, "npm")
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	readInputs(t, dir)
	// The server builds while npm works.
	bin := filepath.Join(t.TempDir(), "skiplock")
	built := make(chan error, 1)
	go func() {
		build := exec.Command("go", "build", "-o", bin, "./cmd/skiplock")
		build.Dir = filepath.Join(dir, "..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			built <- fmt.Errorf("go build: %v\n%s", err, out)
		}
		close(built)
	}()
	run(t, dir, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	run(t, dir, npm, "run", "--silent", "check:generated")
	run(t, dir, npm, "run", "--silent", "check:dist")
	// examples/http-workers/worker.mjs runs on the library (test/example.test.mjs).
	example := filepath.Join(dir, "..", "..", "examples", "http-workers")
	run(t, example, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	dbs := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "skiplock.db") },
	}
	if os.Getenv("SKIPLOCK_TEST_DATABASE_URL") != "" {
		dbs["postgres"] = func(t *testing.T) string { _, u := pgtest.Schema(t); return u }
	} else {
		t.Log("SKIPLOCK_TEST_DATABASE_URL is not set: the Node tests run on SQLite only")
	}
	for name, url := range dbs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := filepath.Join(t.TempDir(), "contracts.yaml")
			if err := os.WriteFile(cfg, []byte(contracts), 0o644); err != nil {
				t.Fatal(err)
			}
			srv := startServe(t, bin, "--database-url", url(t), "--contracts", cfg, "--listen", "127.0.0.1:0")
			control := controlServer(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			args := []string{"--test", "--test-concurrency=1", "--test-reporter=spec"}
			if p := os.Getenv("SKIPLOCK_NODE_TEST_PATTERN"); p != "" {
				args = append(args, "--test-name-pattern="+p) // to run some of the tests
			}
			// The test files by name: given test/, node would run its fixtures too.
			files, err := filepath.Glob(filepath.Join("test", "*.test.mjs"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no test/*.test.mjs: %v", err)
			}
			cmd := exec.CommandContext(ctx, node, append(args, files...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "SKIPLOCK_URL="+srv.url(), "SKIPLOCK_CONTROL_URL="+control, "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node --test: %v\n%s\nserver log:\n%s", err, out, srv.logs())
			}
			t.Logf("node --test:\n%s", out)
		})
	}
}

// readInputs reads every file the Node side uses, so that go test's cache,
// which notes the files a test opens but not those its child processes do,
// runs the test again when one changes.
func readInputs(t *testing.T, dir string) {
	t.Helper()
	root := filepath.Join(dir, "..", "..")
	paths := []string{filepath.Join(root, "docs", "openapi.yaml"), filepath.Join(root, "examples", "http-workers", "worker.mjs"),
		filepath.Join(root, "examples", "http-workers", "package-lock.json")}
	for _, sub := range []string{".", "src", "dist", "scripts", "test"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || (sub == "." && p != dir)) {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				paths = append(paths, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range paths {
		if _, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
}

// tool answers the path of a program, or skips the test without it.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not on PATH: the TypeScript client is not tested", name)
	}
	return p
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", filepath.Base(name), strings.Join(args, " "), dir, err, out)
	}
}

// server is a running `skiplock serve`, restarted by restart on the same
// address and database.
type server struct {
	t    *testing.T
	bin  string
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	addr string
	log  strings.Builder
}

var listeningRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

func startServe(t *testing.T, bin string, args ...string) *server {
	s := &server{t: t, bin: bin, args: args}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.kill() })
	return s
}

func (s *server) start() error {
	args := append([]string{"serve"}, s.args...)
	if s.addr != "" {
		// A restart listens where the first one did.
		args = append(args, "--listen", s.addr)
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.t.TempDir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case a := <-addr:
		s.mu.Lock()
		s.cmd, s.done, s.addr = cmd, done, a
		s.mu.Unlock()
		return nil
	case <-done:
		return fmt.Errorf("skiplock serve exited:\n%s", s.logs())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("skiplock serve does not listen:\n%s", s.logs())
	}
}

// kill ends the server with SIGKILL.
func (s *server) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-done
	}
}

func (s *server) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

func (s *server) url() string { return "http://" + s.addr }

// controlServer answers POST /restart by killing the server (SIGKILL) and
// starting it again on the same address and database.
func controlServer(t *testing.T, s *server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /restart", func(w http.ResponseWriter, r *http.Request) {
		s.kill()
		s.mu.Lock()
		s.log.WriteString("-- killed and restarted by the test --\n")
		s.mu.Unlock()
		if err := s.start(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "restarted")
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String()
}
