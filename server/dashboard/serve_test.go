package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// skiplockBin builds the skiplock command once per test run.
func skiplockBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "skiplock-dash-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "skiplock")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/skiplock/skiplock/cmd/skiplock").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build skiplock: %v", buildErr)
	}
	return binPath
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// served is a running `skiplock serve` and its database.
type served struct {
	t    *testing.T
	db   string
	base string
	log  *logBuffer
}

var listenURL = regexp.MustCompile(`msg=listening addr=\S+ url=(\S+)`)

// serve starts `skiplock serve` on db and a free loopback port; it is
// stopped with SIGTERM when the test ends.
func serve(t *testing.T, db string) *served {
	t.Helper()
	cmd := exec.Command(skiplockBin(t), "serve", "--listen", "127.0.0.1:0", "--database-url", db)
	cmd.Dir = t.TempDir()
	s := &served{t: t, db: db, log: &logBuffer{}}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
	})
	testwait.Until(t, 60*time.Second, "serve listening", func() bool {
		select {
		case <-done:
			t.Fatalf("serve exited: %s", s.log.String())
		default:
		}
		m := listenURL.FindStringSubmatch(s.log.String())
		if m != nil {
			s.base = m[1]
		}
		return m != nil
	})
	return s
}

// token creates a token with the CLI and answers its secret.
func (s *served) token(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(skiplockBin(s.t), append([]string{"token", "create", "--database-url", s.db}, args...)...).Output()
	if err != nil {
		s.t.Fatalf("token create %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// api calls the HTTP API with a bearer token and decodes the answer.
func (s *served) api(token, method, path string, body any, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	if res.StatusCode >= 300 && out != nil {
		s.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return res.StatusCode
}

type apiJob struct {
	ID    int64  `json:"id"`
	State string `json:"state"`
}

// enqueue inserts a job through the API.
func (s *served) enqueue(token string, spec map[string]any) apiJob {
	s.t.Helper()
	var out struct{ Job apiJob }
	s.api(token, "POST", "/v1/jobs", spec, &out)
	return out.Job
}

// claim claims the next job of queue for worker.
func (s *served) claim(token, queue, worker string) apiJob {
	s.t.Helper()
	var out struct{ Jobs []apiJob }
	s.api(token, "POST", "/v1/queues/"+queue+"/claim", map[string]any{"worker_id": worker}, &out)
	if len(out.Jobs) != 1 {
		s.t.Fatalf("claim %s: %d jobs", queue, len(out.Jobs))
	}
	return out.Jobs[0]
}

// failed enqueues a job in its own queue and fails it for good.
func (s *served) failed(token, kind string) apiJob {
	s.t.Helper()
	queue := fmt.Sprintf("q-%s-%d", kind, time.Now().UnixNano())
	j := s.enqueue(token, map[string]any{"kind": kind, "queue": queue, "max_retries": 0})
	s.claim(token, queue, "w-fail")
	var out struct{ Job apiJob }
	s.api(token, "POST", fmt.Sprintf("/v1/jobs/%d/fail", j.ID), map[string]any{"worker_id": "w-fail",
		"retryable": false, "error": map[string]any{"type": "boom", "message": "it broke\nat line 2"}}, &out)
	return out.Job
}

func (s *served) job(token string, id int64) apiJob {
	s.t.Helper()
	var out struct{ Job apiJob }
	s.api(token, "GET", fmt.Sprintf("/v1/jobs/%d", id), nil, &out)
	return out.Job
}
