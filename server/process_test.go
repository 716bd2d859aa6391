package server_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
	binaryDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binaryDir != "" {
		_ = os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// skiplockBinary builds cmd/skiplock once for the package's tests.
func skiplockBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		binaryDir, binaryErr = os.MkdirTemp("", "skiplock-bin-")
		if binaryErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		binaryPath = filepath.Join(binaryDir, "skiplock")
		cmd := exec.Command("go", "build", "-o", binaryPath, "./cmd/skiplock")
		cmd.Dir = filepath.Join(filepath.Dir(file), "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// process is a running `skiplock serve`.
type process struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
	log  *strings.Builder
	mu   *sync.Mutex
}

var listeningRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startServe starts `skiplock serve` with args in dir and waits until it
// listens.
func startServe(t *testing.T, dir string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(skiplockBinary(t), append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), log: &strings.Builder{}, mu: &sync.Mutex{}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	select {
	case p.addr = <-addr:
	case <-p.done:
		t.Fatalf("skiplock serve exited: %s", p.logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("skiplock serve does not listen: %s", p.logs())
	}
	return p
}

func (p *process) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *process) url() string { return "http://" + p.addr }

// TestServeKillAndRestart: kill -9 the server during a 1,000-job load,
// restart it; every job it acknowledged ends completed, worked over HTTP.
func TestServeKillAndRestart(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		url := db.url(t)
		dir := t.TempDir()
		first := startServe(t, dir, nil, "--database-url", url, "--listen", "127.0.0.1:0")
		base := first.url()
		const total = 1000
		var acked sync.Map
		var nAcked, killed atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for nAcked.Load() < total {
					a, err := tryRequest(base, "POST", "/v1/jobs", `{"kind":"load","payload":{"n":1},"max_retries":100}`)
					if err != nil || a.status != 201 {
						time.Sleep(20 * time.Millisecond) // server down: retry until it is back
						continue
					}
					acked.Store(id(a.job()), true)
					if n := nAcked.Add(1); n == total/2 && killed.CompareAndSwap(0, 1) {
						_ = first.cmd.Process.Signal(syscall.SIGKILL)
					}
				}
			})
		}
		// Workers run during the load too; the jobs they held at the kill
		// come back when their leases expire.
		stopWork := make(chan struct{})
		var workers sync.WaitGroup
		for i := range 4 {
			workers.Go(func() { workLoop(base, fmt.Sprintf("w%d", i), stopWork) })
		}
		<-first.done
		second := startServe(t, dir, nil, "--database-url", url, "--listen", first.addr)
		wg.Wait()
		// Every acknowledged job ends completed.
		want := map[int64]bool{}
		acked.Range(func(k, _ any) bool { want[k.(int64)] = true; return true })
		deadline := time.Now().Add(90 * time.Second)
		for {
			missing := 0
			done := completedIDs(t, second.url())
			for id := range want {
				if !done[id] {
					missing++
				}
			}
			if missing == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d acknowledged jobs are not completed", missing, len(want))
			}
			time.Sleep(500 * time.Millisecond)
		}
		close(stopWork)
		workers.Wait()
		if len(want) < total {
			t.Fatalf("%d jobs acknowledged, want %d", len(want), total)
		}
	})
}

// workLoop claims and completes jobs over HTTP until stop. A few jobs a
// claim and a lease of seconds: on a loaded machine fifty completions one
// at a time outlast a short lease, and the test is about the kill, not
// about leases running out.
func workLoop(base, workerID string, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		a, err := tryRequest(base, "POST", "/v1/queues/default/claim",
			fmt.Sprintf(`{"worker_id":%q,"max":10,"wait_seconds":1,"lease_seconds":10}`, workerID))
		if err != nil || a.status != 200 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		for _, j := range a.jobs() {
			_, _ = tryRequest(base, "POST", fmt.Sprintf("/v1/jobs/%d/complete", id(j)), fmt.Sprintf(`{"worker_id":%q}`, workerID))
		}
	}
}

// completedIDs lists every completed job.
func completedIDs(t *testing.T, base string) map[int64]bool {
	t.Helper()
	out := map[int64]bool{}
	cursor := ""
	for {
		a := request(t, base, "GET", "/v1/jobs?state=completed&limit=1000&cursor="+cursor, "", nil)
		must(t, a, 200)
		for _, j := range a.jobs() {
			out[id(j)] = true
		}
		cursor, _ = a.body["next_cursor"].(string)
		if cursor == "" {
			return out
		}
	}
}
