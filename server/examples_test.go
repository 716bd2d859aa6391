package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestExampleWorkers runs examples/http-workers against a real server.
func TestExampleWorkers(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "examples", "http-workers")
	// worker.mjs runs on clients/typescript, whose tests run it.
	for _, ex := range []struct{ interpreter, script, worker string }{
		{"python3", "worker.py", "python"}} {
		t.Run(ex.worker, func(t *testing.T) {
			t.Parallel()
			bin, err := exec.LookPath(ex.interpreter)
			if err != nil {
				t.Skipf("%s is not on PATH", ex.interpreter)
			}
			b := setup(t, databases[0], nil)
			admin := createToken(t, b.drv, "admin", "")
			worker := createToken(t, b.drv, "worker", "")
			good := id(must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"add","queue":"math","payload":{"numbers":[1,2,3.5]},"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`), 201).job())
			bad := id(must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"add","queue":"math","payload":{"numbers":"x"}}`), 201).job())
			rr := newReportRecorder(t, b.ts.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, filepath.Join(dir, ex.script))
			cmd.Env = append(os.Environ(), "SKIPLOCK_SERVER="+rr.url, "SKIPLOCK_TOKEN="+worker,
				"SKIPLOCK_QUEUE=math", "SKIPLOCK_MAX_JOBS=2")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", ex.script, err, out)
			}
			j := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", good), admin, nil), 200).job()
			res, _ := j["result"].(map[string]any)
			// The worker continued the producer's trace: same trace id, a span of its own.
			child, _ := res["traceparent"].(string)
			if j["state"] != "completed" || res["sum"] != 6.5 || res["worker"] != ex.worker || j["progress_message"] != "adding" ||
				!strings.HasPrefix(child, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || strings.Contains(child, "00f067aa0ba902b7") {
				t.Fatalf("job worked by %s: %v", ex.script, j)
			}
			j = must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", bad), admin, nil), 200).job()
			if j["state"] != "failed" || len(j["errors"].([]any)) != 1 {
				t.Fatalf("bad job worked by %s: %v", ex.script, j)
			}
			// Every report carries the claimed attempt.
			reports := rr.all()
			for _, r := range reports {
				if r.attempt != 1.0 {
					t.Errorf("%s: %s of job %d carried attempt %v, want 1", ex.script, r.action, r.jobID, r.attempt)
				}
			}
			if len(reports) < 3 {
				t.Errorf("%s sent %d reports: %v", ex.script, len(reports), reports)
			}
		})
	}
}

// TestExampleBatchWorker runs examples/http-workers/batch_worker.py against
// a real server: the good jobs complete with their sums, reported with
// a next claim (or a POST /v1/jobs/complete); the bad one fails.
func TestExampleBatchWorker(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "examples", "http-workers", "batch_worker.py")
	b := setup(t, databases[0], nil)
	admin := createToken(t, b.drv, "admin", "")
	worker := createToken(t, b.drv, "worker", "")
	var good []int64
	for i := range 7 {
		good = append(good, id(must(t, b.do(t, "POST", "/v1/jobs", admin, fmt.Sprintf(`{"kind":"add","queue":"sums","payload":{"numbers":[%d,1]}}`, i)), 201).job()))
	}
	bad := id(must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"add","queue":"sums","payload":{"numbers":"x"}}`), 201).job())

	// A proxy that counts the calls and the claims that carry reports.
	u, err := url.Parse(b.ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := map[string]int{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		what := r.URL.Path
		if strings.HasSuffix(what, "/claim") && bytes.Contains(raw, []byte(`"complete"`)) {
			what += " with complete"
		}
		mu.Lock()
		calls[what]++
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, script)
	cmd.Env = append(os.Environ(), "SKIPLOCK_SERVER="+ts.URL, "SKIPLOCK_TOKEN="+worker,
		"SKIPLOCK_QUEUE=sums", "SKIPLOCK_BATCH=3", "SKIPLOCK_MAX_JOBS=8")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("batch_worker.py: %v\n%s", err, out)
	}
	for i, jid := range good {
		j := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", jid), admin, nil), 200).job()
		res, _ := j["result"].(map[string]any)
		if j["state"] != "completed" || res["sum"] != float64(i+1) || res["worker"] != "python-batch" {
			t.Errorf("job %d worked by batch_worker.py: %v", jid, j)
		}
	}
	if j := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", bad), admin, nil), 200).job(); j["state"] != "failed" {
		t.Errorf("the bad job: %v", j)
	}
	// Claims of at most 3 jobs; finished jobs ride on a next claim, or go
	// in a POST /v1/jobs/complete when none comes (how they split depends
	// on timing), never one call per job.
	mu.Lock()
	defer mu.Unlock()
	single := 0
	for what, n := range calls {
		if strings.HasSuffix(what, "/complete") && what != "/v1/jobs/complete" {
			single += n
		}
	}
	if calls["/v1/queues/sums/claim with complete"]+calls["/v1/jobs/complete"] < 1 || single > 0 ||
		calls["/v1/queues/sums/claim"]+calls["/v1/queues/sums/claim with complete"] < 3 {
		t.Errorf("calls: %v, want at least 3 claims and completions in batches", calls)
	}
}
