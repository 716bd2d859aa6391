package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"
	"github.com/skiplock/skiplock/server"
)

// report is a worker's report seen by a reportRecorder.
type report struct {
	action  string // heartbeat, complete or fail
	jobID   int64
	attempt any // as decoded from the body; nil when absent
	queue   any // likewise
}

// batchReports answers the completions a request carries many at a time
// (POST /v1/jobs/complete, or a claim's "complete"), one report each, and
// nil for any other request; it leaves the body readable.
func batchReports(r *http.Request) []report {
	field := ""
	switch {
	case r.URL.Path == "/v1/jobs/complete":
		field = "jobs"
	case strings.HasPrefix(r.URL.Path, "/v1/queues/") && strings.HasSuffix(r.URL.Path, "/claim"):
		field = "complete"
	default:
		return nil
	}
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var body map[string]json.RawMessage
	_ = json.Unmarshal(raw, &body)
	var jobs []struct {
		ID      int64 `json:"id"`
		Attempt any   `json:"attempt"`
		Queue   any   `json:"queue"`
	}
	_ = json.Unmarshal(body[field], &jobs)
	out := []report{}
	for _, j := range jobs {
		out = append(out, report{action: "complete", jobID: j.ID, attempt: j.Attempt, queue: j.Queue})
	}
	return out
}

// reportRecorder is a proxy in front of a server that records the reports
// workers send through it.
type reportRecorder struct {
	url     string
	mu      sync.Mutex
	reports []report
	// seen, when set, is called with each report.
	seen func(report)
}

func newReportRecorder(t *testing.T, target string) *reportRecorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rr := &reportRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a worker killed mid-request is no news
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var jid int64
		var action string
		if batch := batchReports(r); batch != nil {
			rr.mu.Lock()
			rr.reports = append(rr.reports, batch...)
			seen := rr.seen
			rr.mu.Unlock()
			for _, rep := range batch {
				if seen != nil {
					seen(rep)
				}
			}
		} else if _, err := fmt.Sscanf(r.URL.Path, "/v1/jobs/%d/%s", &jid, &action); err == nil {
			raw, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(raw))
			var body map[string]any
			_ = json.Unmarshal(raw, &body)
			rep := report{action: action, jobID: jid, attempt: body["attempt"], queue: body["queue"]}
			rr.mu.Lock()
			rr.reports = append(rr.reports, rep)
			seen := rr.seen
			rr.mu.Unlock()
			if seen != nil {
				seen(rep)
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	rr.url = ts.URL
	return rr
}

func (rr *reportRecorder) all() []report {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]report(nil), rr.reports...)
}

// TestWorkerCommandSendsAttempt: `skiplock worker` sends the claimed job's
// attempt and queue in every heartbeat, completion and failure.
func TestWorkerCommandSendsAttempt(t *testing.T) {
	b := setup(t, databases[len(databases)-1], nil)
	dir := t.TempDir()
	rr := newReportRecorder(t, b.ts.URL)
	rr.seen = func(r report) {
		if r.action == "heartbeat" {
			_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("beat-%d", r.jobID)), nil, 0o644)
		}
	}
	// The job runs until its first heartbeat went out, then completes; the
	// other fails at once.
	script := `case "$SKIPLOCK_JOB_KIND" in
k) while [ ! -e "` + dir + `/beat-$SKIPLOCK_JOB_ID" ]; do sleep 0.05; done; echo '{"ok":true}';;
*) echo nope >&2; exit 3;;
esac`
	if err := os.WriteFile(filepath.Join(dir, "job.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ids := reclaimed(t, b, "attempts", 1)
	// Give the reclaimed job back to the queue, attempt 2 spent, for the
	// worker to claim as attempt 3.
	must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", ids[0]), "",
		`{"worker_id":"w","attempt":2,"error":{"type":"x","message":"again"},"retry_in_seconds":0}`), 200)
	beat := ids[0]
	bad := id(must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"bad","queue":"attempts","max_retries":0}`), 201).job())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, skiplockBinary(t), "worker", "--server", rr.url, "--queue", "attempts",
		"--exec", "sh "+filepath.Join(dir, "job.sh"), "--lease", "3s", "--wait", "1s")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	state := func(jid int64) any { return fencedJob(t, b, jid)["state"] }
	testwait.Until(t, 60*time.Second, "the bad job failed", func() bool { return state(bad) == "failed" })
	testwait.Until(t, 60*time.Second, "the heartbeating job completed", func() bool { return state(beat) == "completed" })
	want := map[int64]float64{beat: 3, bad: 1}
	seen := map[string]bool{}
	for _, r := range rr.all() {
		seen[r.action] = true
		if r.attempt != want[r.jobID] || r.queue != "attempts" {
			t.Errorf("%s of job %d carried attempt %v, queue %v; want %v, attempts\n%s", r.action, r.jobID, r.attempt, r.queue,
				want[r.jobID], logs.String())
		}
	}
	if !seen["heartbeat"] || !seen["complete"] || !seen["fail"] {
		t.Fatalf("reports seen: %v\n%s", rr.all(), logs.String())
	}
}

// TestWorkerCommandRefusedToken: a token the server refuses (401) or one
// without the worker role (403) ends `skiplock worker` with exit 2 and one
// line on stderr, instead of retrying forever.
func TestWorkerCommandRefusedToken(t *testing.T) {
	b := setup(t, databases[len(databases)-1], func(c *server.Config) { c.OpenWithoutTokens = false })
	producer := createToken(t, b.drv, "producer", "")
	for token, want := range map[string]string{
		"skl_wrong": "the server refused the token (401 unauthenticated)",
		producer:    "the server refused the token (403 permission_denied)",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, skiplockBinary(t), "worker", "--server", b.ts.URL, "--queue", "q",
			"--exec", "cat", "--token", token, "--concurrency", "3", "--wait", "1s")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok && ee.Exited() {
			code = ee.ExitCode()
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], want) {
			t.Errorf("worker with a refused token (%s): %v (exit %d), stderr:\n%s", want, err, code, stderr.String())
		}
	}
}

// TestWorkerCommandTokenRevokedWhileRunning: a token revoked while a
// command runs ends the worker at its next heartbeat (exit 2), the command
// stopped.
func TestWorkerCommandTokenRevokedWhileRunning(t *testing.T) {
	b := setup(t, databases[len(databases)-1], func(c *server.Config) { c.OpenWithoutTokens = false })
	admin, worker := createToken(t, b.drv, "admin", ""), createToken(t, b.drv, "worker", "")
	dir := t.TempDir()
	must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"long","queue":"revoked"}`), 201)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, skiplockBinary(t), "worker", "--server", b.ts.URL, "--queue", "revoked",
		"--exec", "touch "+filepath.Join(dir, "started")+"; trap 'touch "+filepath.Join(dir, "stopped")+"; exit 1' TERM; while true; do sleep 0.1; done",
		"--token", worker, "--lease", "3s", "--wait", "1s", "--kill-grace", "5s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "the command to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	})
	tokens, err := tokenStore(t, b.drv).TokenList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range tokens {
		if tok.Hash == server.HashToken(worker) {
			if err := tokenStore(t, b.drv).TokenDelete(context.Background(), tok.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 ||
		!strings.Contains(lines[len(lines)-1], "the server refused the token (401 unauthenticated)") {
		t.Fatalf("worker after its token was revoked: %v, stderr:\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "stopped")); err != nil {
		t.Fatalf("the command was not stopped: %v\n%s", err, stderr.String())
	}
}
