package server_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// TestCitusServeWorkerCommand: `skiplock serve` on a schema distributed on
// Citus, and `skiplock worker` against it: jobs heartbeat and complete, a
// bad one fails, and every report names the job's queue (its shard).
func TestCitusServeWorkerCommand(t *testing.T) {
	_, url := pgtest.CitusSchema(t)
	dir := t.TempDir()
	srv := startServe(t, dir, nil, "--database-url", url, "--listen", "127.0.0.1:0")
	rr := newReportRecorder(t, srv.url())
	rr.seen = func(r report) {
		if r.action == "heartbeat" {
			_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("beat-%d", r.jobID)), nil, 0o644)
		}
	}
	// A job of kind k runs until its first heartbeat went out; one of kind
	// quick completes at once (its report may ride on a claim); bad fails.
	script := `case "$SKIPLOCK_JOB_KIND" in
k) while [ ! -e "` + dir + `/beat-$SKIPLOCK_JOB_ID" ]; do sleep 0.05; done; echo '{"ok":true}';;
quick) echo 1;;
*) echo nope >&2; exit 3;;
esac`
	if err := os.WriteFile(filepath.Join(dir, "job.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{}
	for _, kind := range []string{"k", "quick", "quick", "bad"} {
		a, err := tryRequest(srv.url(), "POST", "/v1/jobs", fmt.Sprintf(`{"kind":%q,"queue":"cw","max_retries":0}`, kind))
		if err != nil || a.status != 201 {
			t.Fatalf("enqueue %s: %v %s", kind, err, a.raw)
		}
		want[id(a.job())] = map[bool]string{true: "failed", false: "completed"}[kind == "bad"]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, skiplockBinary(t), "worker", "--server", rr.url, "--queue", "cw",
		"--exec", "sh "+filepath.Join(dir, "job.sh"), "--lease", "3s", "--wait", "1s", "--concurrency", "2")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for jid, state := range want {
		testwait.Until(t, 60*time.Second, fmt.Sprintf("job %d %s", jid, state), func() bool {
			a, err := tryRequest(srv.url(), "GET", fmt.Sprintf("/v1/jobs/%d", jid), "")
			return err == nil && a.job()["state"] == state
		})
	}
	seen := map[string]bool{}
	for _, r := range rr.all() {
		seen[r.action] = true
		if r.queue != "cw" || r.attempt != 1.0 {
			t.Errorf("%s of job %d carried queue %v, attempt %v; want cw, 1\n%s", r.action, r.jobID, r.queue, r.attempt,
				logs.String())
		}
	}
	if !seen["heartbeat"] || !seen["complete"] || !seen["fail"] {
		t.Fatalf("reports seen: %v\n%s", rr.all(), logs.String())
	}
}
