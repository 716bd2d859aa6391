// Package python_test runs the Python client's test suite (clients/python/tests)
// against real `skiplock serve` processes: SQLite always, PostgreSQL when
// SKIPLOCK_TEST_DATABASE_URL is set. It also type-checks the package with mypy
// and checks that every file parses as Python 3.9.
package python_test

import (
	"bufio"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/pgtest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// here is clients/python.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// skiplockBinary builds cmd/skiplock once for the package's tests.
func skiplockBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "skiplock-pyclient-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "skiplock")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/skiplock")
		cmd.Dir = filepath.Join(here(), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func python(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the Python client's tests need it")
	}
	return bin
}

// database is a fresh database for a server process.
type database struct {
	name string
	url  func(t *testing.T) string
}

func databases() []database {
	dbs := []database{{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "skiplock.db") }}}
	if os.Getenv("SKIPLOCK_TEST_DATABASE_URL") != "" {
		dbs = append(dbs, database{"postgres", func(t *testing.T) string { _, u := pgtest.Schema(t); return u }})
	}
	return dbs
}

var listeningRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// serve starts `skiplock serve` on url and answers its base URL.
func serve(t *testing.T, url string) string {
	t.Helper()
	cmd := exec.Command(skiplockBinary(t), "serve", "--listen", "127.0.0.1:0", "--database-url", url)
	cmd.Dir = t.TempDir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logs strings.Builder
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	select {
	case a := <-addr:
		return "http://" + a
	case <-done:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("skiplock serve exited: %s", logs.String())
	case <-time.After(60 * time.Second):
		t.Fatal("skiplock serve does not listen")
	}
	return ""
}

// token creates a token on the database and answers it.
func token(t *testing.T, url string, args ...string) string {
	t.Helper()
	cmd := exec.Command(skiplockBinary(t), append([]string{"token", "create", "--database-url", url}, args...)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("skiplock token create %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tlsProxy serves base over HTTPS with a certificate of its own, and
// answers the environment that tells the tests its URL and CA file.
func tlsProxy(t *testing.T, base string) []string {
	t.Helper()
	u, err := neturl.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(u))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the test's untrusted client fails its handshake
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"SKIPLOCK_TEST_TLS_SERVER=" + ts.URL, "SKIPLOCK_TEST_TLS_CA=" + ca}
}

// TestPythonClient runs `python3 -m unittest` in clients/python against a
// server with tokens, and gives the tests what they need to start servers
// of their own (the restart test).
func TestPythonClient(t *testing.T) {
	py := python(t)
	bin := skiplockBinary(t)
	for _, db := range databases() {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			url := db.url(t)
			server := serve(t, url)
			env := []string{
				"SKIPLOCK_TEST_TOKEN=" + token(t, url, "--role", "admin"),
				"SKIPLOCK_TEST_WORKER_TOKEN=" + token(t, url, "--role", "worker"),
				"SKIPLOCK_TEST_TENANT_TOKEN=" + token(t, url, "--role", "producer", "--tenant", "acme"),
				"SKIPLOCK_TEST_SERVER=" + server,
				"SKIPLOCK_TEST_BINARY=" + bin,
				"SKIPLOCK_TEST_RESTART_DATABASE_URL=" + db.url(t),
				"SKIPLOCK_TEST_TMP=" + t.TempDir(),
			}
			env = append(env, tlsProxy(t, server)...)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
			cmd.Dir = here()
			cmd.Env = append(os.Environ(), env...)
			cmd.Env = append(cmd.Env, "PYTHONDONTWRITEBYTECODE=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("python3 -m unittest: %v\n%s", err, out)
			}
			if testing.Verbose() {
				t.Logf("%s", out)
			}
		})
	}
}

// TestPythonTypes checks that every file parses as Python 3.9 and that
// mypy --strict passes on the package (skipped, saying so, without mypy).
func TestPythonTypes(t *testing.T) {
	py := python(t)
	check := `import ast, pathlib, sys
for p in sorted(pathlib.Path(".").rglob("*.py")):
    ast.parse(p.read_text(), str(p), feature_version=(3, 9))
`
	cmd := exec.Command(py, "-c", check)
	cmd.Dir = here()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a file does not parse as Python 3.9: %v\n%s", err, out)
	}
	mypy := mypyCommand()
	if mypy == nil {
		t.Skip("mypy is not installed (apt-get install python3-mypy): type check skipped")
	}
	args := append(mypy[1:], "--strict", "--python-version", "3.9", "--cache-dir", t.TempDir(), "skiplock", "bench.py")
	cmd = exec.Command(mypy[0], args...)
	cmd.Dir = here()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mypy: %v\n%s", err, out)
	}
}

// mypyCommand answers how to run mypy here: the mypy command, else a
// python3 that has the mypy module (Debian's python3-mypy), else nil.
func mypyCommand() []string {
	if p, err := exec.LookPath("mypy"); err == nil {
		return []string{p}
	}
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-m", "mypy", "--version").Run() == nil {
			return []string{py, "-m", "mypy"}
		}
	}
	return nil
}
