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
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
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
	logFormat                     string
	// traces makes a span per command when OTEL_* asks for tracing.
	traces *tracing
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
no new claims, running commands finish. On Linux a command dies with its
worker, even one killed with SIGKILL. A token the server refuses (401, 403)
ends the worker with exit status 2.`,
		Example: `  skiplock worker --queue thumbnails --exec ./make-thumbnail.sh --concurrency 4`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if c.queue == "" || c.command == "" {
				return usagef("--queue and --exec are required")
			}
			if c.concurrency < 1 || c.concurrency > 1000 {
				return usagef("--concurrency: must be between 1 and 1000, got %d", c.concurrency)
			}
			if err := checkWorkerDurations(&c); err != nil {
				return err
			}
			if c.server == "" {
				c.server = envOr("SKIPLOCK_SERVER", "http://127.0.0.1:8080")
			}
			if u, err := url.Parse(c.server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usagef("--server: %q is not an http:// or https:// address of a Skiplock server", c.server)
			}
			if c.token == "" {
				c.token = os.Getenv("SKIPLOCK_TOKEN")
			}
			host, _ := os.Hostname()
			c.id = fmt.Sprintf("%s-%d-worker", host, os.Getpid())
			log, err := newLogger(os.Stderr, c.logFormat, slog.LevelInfo)
			if err != nil {
				return err
			}
			if c.traces, err = setupTracing(cmd.Context()); err != nil {
				return err
			}
			defer func() {
				if err := c.traces.shutdown(); err != nil {
					log.Warn("tracing", "error", err)
				}
			}()
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
	f.StringVar(&c.logFormat, "log-format", "", logFormatUsage)
	// The global database URLs do not apply (the worker reaches the
	// database through --server): these local flags hide them from the help
	// and take them, as scripts give every command the same flags.
	for _, name := range []string{"database-url", "listen-database-url", "read-database-url"} {
		f.String(name, "", "")
		_ = f.MarkHidden(name)
	}
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
// still run. A token the server refuses ends it with that error.
func runWorker(ctx context.Context, c *workerConfig, log *slog.Logger) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	w := &httpWorker{cfg: c, log: log, http: &http.Client{Timeout: c.wait + 30*time.Second}, stop: stop}
	var wg sync.WaitGroup
	for i := range c.concurrency {
		wg.Go(func() { w.loop(ctx, fmt.Sprintf("%s-%d", c.id, i)) })
	}
	wg.Wait()
	if err := w.refusal(); err != nil {
		return err
	}
	log.Info("worker stopped")
	return nil
}

type httpWorker struct {
	cfg     *workerConfig
	log     *slog.Logger
	http    *http.Client
	started sync.Once
	// stop ends the claims once the server refused the token.
	stop    context.CancelFunc
	mu      sync.Mutex
	refused error
}

// refuse reports whether err is the server refusing the token (401 or
// 403), which no retry mends; the first such ends the worker.
func (w *httpWorker) refuse(err error) bool {
	var he *httpError
	if !errors.As(err, &he) || (he.status != http.StatusUnauthorized && he.status != http.StatusForbidden) {
		return false
	}
	var body struct {
		Error struct{ Code, Message string }
	}
	msg := he.body
	if json.Unmarshal([]byte(he.body), &body) == nil && body.Error.Code != "" {
		msg = fmt.Sprintf("(%d %s): %s", he.status, body.Error.Code, body.Error.Message)
	} else {
		msg = fmt.Sprintf("(%d): %s", he.status, msg)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refused == nil {
		w.refused = &usageError{err: fmt.Errorf("worker: the server refused the token %s", msg)}
		w.stop()
	}
	return true
}

func (w *httpWorker) refusal() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}

// workerIDs names the worker ids the loops claim as, as jobs record them:
// "host-42-worker-0", or "host-42-worker-0…host-42-worker-7".
func workerIDs(id string, loops int) string {
	if loops == 1 {
		return id + "-0"
	}
	return fmt.Sprintf("%s-0…%s-%d", id, id, loops-1)
}

// checkWorkerDurations checks the duration flags against what the server
// takes, so that a worker does not start only to have every claim refused.
func checkWorkerDurations(c *workerConfig) error {
	switch {
	case c.lease < 3*time.Second || c.lease > input.MaxLeaseSeconds*time.Second:
		return usagef("--lease: must be between 3s and %s, got %s", input.MaxLeaseSeconds*time.Second, c.lease)
	case c.wait < 0 || c.wait > 60*time.Second:
		return usagef("--wait: must be between 0s and 60s, got %s", c.wait)
	case c.killGrace < 0:
		return usagef("--kill-grace: must not be negative, got %s", c.killGrace)
	case c.retryLater < 0:
		return usagef("--retry-later: must not be negative, got %s", c.retryLater)
	}
	return nil
}

// claimedJob is a job a claim answered: the API's job view.
type claimedJob = skiplock.JobView

func (w *httpWorker) loop(ctx context.Context, workerID string) {
	backoff := time.Second
	// The first claim answers at once: the worker says it started once the
	// server took its token, rather than after a long poll.
	wait := 0.0
	for ctx.Err() == nil {
		var out struct {
			Jobs []claimedJob `json:"jobs"`
		}
		body := map[string]any{"worker_id": workerID, "max": 1, "wait_seconds": wait,
			"lease_seconds": w.cfg.lease.Seconds(), "kinds": w.cfg.kinds}
		// A drain cancels a waiting claim rather than wait out its long
		// poll; the server hands back what it claimed as the worker went
		// away. A job the claim does bring back runs, drain or not.
		if err := w.call(ctx, "/v1/queues/"+w.cfg.queue+"/claim", body, &out); err != nil {
			if ctx.Err() != nil || w.refuse(err) {
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
		w.started.Do(func() {
			w.log.Info("worker started", "server", w.cfg.server, "queue", w.cfg.queue,
				"concurrency", w.cfg.concurrency, "worker_ids", workerIDs(w.cfg.id, w.cfg.concurrency))
		})
		backoff, wait = time.Second, w.cfg.wait.Seconds()
		for _, j := range out.Jobs {
			w.run(j, workerID)
		}
	}
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
