package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newWorkerCmd) }

// exitRetryLater is the exit status (EX_TEMPFAIL) by which a command asks
// to be retried later.
const exitRetryLater = 75

type workerConfig struct {
	server, token, queue, command string
	concurrency                   int
	lease, wait, killGrace        time.Duration
	retryLater                    time.Duration
	kinds                         []string
	id                            string
}

func newWorkerCmd(_ *globals) *cobra.Command {
	var c workerConfig
	cmd := &cobra.Command{
		Use:   "worker --queue Q --exec CMD",
		Short: "Work a queue over HTTP, running a command per job",
		Long: `Claim jobs of a queue from a Skiplock server and run CMD (with sh -c) for each:
the payload on standard input, the job in SKIPLOCK_JOB_* environment variables.
Exit 0 completes the job with standard output as its result (JSON if it
parses, else a string); exit 75 retries it later; any other exit fails the
attempt with the tail of standard error (retried per the job's policy). A
cancelled job's command gets SIGTERM, then SIGKILL. SIGTERM or SIGINT drains:
no new claims, running commands finish.`,
		Example: `  skiplock worker --queue thumbnails --exec ./make-thumbnail.sh --concurrency 4`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if c.queue == "" || c.command == "" {
				return usagef("--queue and --exec are required")
			}
			if c.concurrency < 1 || c.concurrency > 1000 {
				return usagef("--concurrency: must be between 1 and 1000, got %d", c.concurrency)
			}
			if c.lease < 3*time.Second || c.wait < 0 || c.wait > 60*time.Second {
				return usagef("--lease must be at least 3s and --wait at most 60s")
			}
			if c.server == "" {
				c.server = envOr("SKIPLOCK_SERVER", "http://127.0.0.1:8080")
			}
			if c.token == "" {
				c.token = os.Getenv("SKIPLOCK_TOKEN")
			}
			host, _ := os.Hostname()
			c.id = fmt.Sprintf("%s-%d-worker", host, os.Getpid())
			log := slog.New(slog.NewTextHandler(os.Stderr, nil))
			return runWorker(cmd.Context(), &c, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.queue, "queue", "", "queue to work (required)")
	f.StringVar(&c.command, "exec", "", "command run with sh -c for each job (required)")
	f.IntVar(&c.concurrency, "concurrency", 1, "jobs run at once")
	f.StringVar(&c.server, "server", "", "server URL (env SKIPLOCK_SERVER; default http://127.0.0.1:8080)")
	f.StringVar(&c.token, "token", "", "bearer token (env SKIPLOCK_TOKEN)")
	f.StringSliceVar(&c.kinds, "kind", nil, "only claim jobs of this kind (repeatable)")
	f.DurationVar(&c.lease, "lease", 60*time.Second, "lease of a claimed job; heartbeats come every third of it")
	f.DurationVar(&c.wait, "wait", 20*time.Second, "long-poll wait of a claim")
	f.DurationVar(&c.killGrace, "kill-grace", 10*time.Second, "time between SIGTERM and SIGKILL of a cancelled job's command")
	f.DurationVar(&c.retryLater, "retry-later", 30*time.Second, "retry delay after exit status 75")
	return cmd
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// runWorker claims until ctx ends, then lets running commands finish. A
// claim waiting on its long poll ends with ctx; the jobs a claim brings
// still run.
func runWorker(ctx context.Context, c *workerConfig, log *slog.Logger) error {
	w := &httpWorker{cfg: c, log: log, http: &http.Client{Timeout: c.wait + 30*time.Second}}
	log.Info("worker started", "server", c.server, "queue", c.queue, "concurrency", c.concurrency, "worker_id", c.id)
	var wg sync.WaitGroup
	for i := range c.concurrency {
		wg.Go(func() { w.loop(ctx, fmt.Sprintf("%s-%d", c.id, i)) })
	}
	wg.Wait()
	log.Info("worker stopped")
	return nil
}

type httpWorker struct {
	cfg  *workerConfig
	log  *slog.Logger
	http *http.Client
}

type claimedJob struct {
	ID         int64           `json:"id"`
	Kind       string          `json:"kind"`
	Op         *string         `json:"op"`
	Queue      string          `json:"queue"`
	Tenant     string          `json:"tenant"`
	Attempt    int             `json:"attempt"`
	MaxRetries int             `json:"max_retries"`
	Priority   int             `json:"priority"`
	Payload    json.RawMessage `json:"payload"`
	Checkpoint json.RawMessage `json:"checkpoint"`
	WorkflowID *string         `json:"workflow_id"`
	Stage      *string         `json:"stage"`
}

func (w *httpWorker) loop(ctx context.Context, workerID string) {
	backoff := time.Second
	for ctx.Err() == nil {
		var out struct {
			Jobs []claimedJob `json:"jobs"`
		}
		body := map[string]any{"worker_id": workerID, "max": 1, "wait_seconds": w.cfg.wait.Seconds(),
			"lease_seconds": w.cfg.lease.Seconds(), "kinds": w.cfg.kinds}
		// A drain cancels a waiting claim rather than wait out its long
		// poll; the server hands back what it claimed as the worker went
		// away. A job the claim does bring back runs, drain or not.
		if err := w.call(ctx, "/v1/queues/"+w.cfg.queue+"/claim", body, &out); err != nil {
			if ctx.Err() != nil {
				return
			}
			w.log.Warn("claim", "error", err, "retry_in", backoff)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		backoff = time.Second
		for _, j := range out.Jobs {
			w.run(j, workerID)
		}
	}
}

// run runs the command for a job and reports its outcome.
func (w *httpWorker) run(j claimedJob, workerID string) {
	log := w.log.With("job_id", j.ID, "kind", j.Kind, "attempt", j.Attempt)
	cmd := exec.Command("sh", "-c", w.cfg.command)
	cmd.Stdin = bytes.NewReader(j.Payload)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = &stdout, io.MultiWriter(stderr, os.Stderr)
	cmd.Env = append(os.Environ(), jobEnv(j, w.cfg, workerID)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // signals reach the command's children
	if err := cmd.Start(); err != nil {
		w.fail(log, j.ID, workerID, "exec", err.Error(), true, nil)
		return
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop, err := w.watch(log, j.ID, workerID, cmd, done)
	switch {
	case stop == "lease lost":
		log.Warn("lease lost: the command was stopped and nothing is reported")
	case stop == "cancelled":
		w.fail(log, j.ID, workerID, "cancelled", "cancelled by request", false, nil)
	case err == nil:
		w.complete(log, j.ID, workerID, stdout.Bytes())
	default:
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if code == exitRetryLater {
			d := w.cfg.retryLater
			w.fail(log, j.ID, workerID, "retry_later", msg, true, &d)
			return
		}
		w.fail(log, j.ID, workerID, "exit_status_"+strconv.Itoa(code), msg, true, nil)
	}
}

// watch heartbeats while the command runs and stops it when the job is
// cancelled or its lease is lost.
func (w *httpWorker) watch(log *slog.Logger, id int64, workerID string, cmd *exec.Cmd, done <-chan error) (string, error) {
	tick := time.NewTicker(w.cfg.lease / 3)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return "", err
		case <-tick.C:
			var hb struct {
				CancelRequested bool `json:"cancel_requested"`
			}
			err := w.call(context.Background(), fmt.Sprintf("/v1/jobs/%d/heartbeat", id),
				map[string]any{"worker_id": workerID, "lease_seconds": w.cfg.lease.Seconds()}, &hb)
			var he *httpError
			switch {
			case errors.As(err, &he) && (he.status == http.StatusConflict || he.status == http.StatusNotFound):
				return "lease lost", w.terminate(cmd, done)
			case err != nil:
				log.Warn("heartbeat", "error", err)
			case hb.CancelRequested:
				log.Info("job cancelled: stopping the command")
				return "cancelled", w.terminate(cmd, done)
			}
		}
	}
}

// terminate sends SIGTERM to the command's process group, then SIGKILL
// after the grace period.
func (w *httpWorker) terminate(cmd *exec.Cmd, done <-chan error) error {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-time.After(w.cfg.killGrace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return <-done
	}
}

func (w *httpWorker) complete(log *slog.Logger, id int64, workerID string, stdout []byte) {
	body := map[string]any{"worker_id": workerID}
	if out := bytes.TrimSpace(stdout); len(out) > 0 {
		if json.Valid(out) {
			body["result"] = json.RawMessage(out)
		} else {
			body["result"] = string(out)
		}
	}
	if err := w.report(fmt.Sprintf("/v1/jobs/%d/complete", id), body); err != nil {
		log.Error("report completion", "error", err)
		return
	}
	log.Info("job completed")
}

func (w *httpWorker) fail(log *slog.Logger, id int64, workerID, typ, msg string, retryable bool, retryIn *time.Duration) {
	body := map[string]any{"worker_id": workerID, "error": map[string]string{"type": typ, "message": msg},
		"retryable": retryable}
	if retryIn != nil {
		body["retry_in_seconds"] = retryIn.Seconds()
	}
	if err := w.report(fmt.Sprintf("/v1/jobs/%d/fail", id), body); err != nil {
		log.Error("report failure", "error", err)
		return
	}
	log.Info("job failed", "type", typ)
}

// report sends a completion or failure, retrying while the server is
// unreachable (the lease keeps the job ours meanwhile).
func (w *httpWorker) report(path string, body any) error {
	wait := 500 * time.Millisecond
	for range 8 {
		err := w.call(context.Background(), path, body, nil)
		var he *httpError
		if err == nil || (errors.As(err, &he) && he.status < 500) {
			return err
		}
		time.Sleep(wait)
		wait = min(wait*2, 10*time.Second)
	}
	return w.call(context.Background(), path, body, nil)
}

type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

func (w *httpWorker) call(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimRight(w.cfg.server, "/")+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if w.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.cfg.token)
	}
	res, err := w.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if res.StatusCode != http.StatusOK {
		return &httpError{status: res.StatusCode, body: strings.TrimSpace(string(raw))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

func jobEnv(j claimedJob, c *workerConfig, workerID string) []string {
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	checkpoint := ""
	if len(j.Checkpoint) > 0 && string(j.Checkpoint) != "null" {
		checkpoint = string(j.Checkpoint)
	}
	return []string{
		"SKIPLOCK_JOB_ID=" + strconv.FormatInt(j.ID, 10), "SKIPLOCK_JOB_KIND=" + j.Kind,
		"SKIPLOCK_JOB_OP=" + deref(j.Op), "SKIPLOCK_JOB_QUEUE=" + j.Queue, "SKIPLOCK_JOB_TENANT=" + j.Tenant,
		"SKIPLOCK_JOB_ATTEMPT=" + strconv.Itoa(j.Attempt), "SKIPLOCK_JOB_MAX_RETRIES=" + strconv.Itoa(j.MaxRetries),
		"SKIPLOCK_JOB_PRIORITY=" + strconv.Itoa(j.Priority), "SKIPLOCK_JOB_WORKFLOW_ID=" + deref(j.WorkflowID),
		"SKIPLOCK_JOB_STAGE=" + deref(j.Stage), "SKIPLOCK_JOB_CHECKPOINT=" + checkpoint,
		"SKIPLOCK_WORKER_ID=" + workerID, "SKIPLOCK_SERVER=" + c.server,
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
