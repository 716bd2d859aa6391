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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// jobCommand is a job's command, running in a process group of its own
// (pgid) so that signals reach its children too.
type jobCommand struct {
	pgid int
	// wait waits for the command's end: nil when it exited 0, else an
	// error that has an ExitCode (-1 when a signal ended it) or none when
	// it could not run.
	wait func() error
}

// run runs the command for a job and reports its outcome; every report
// carries the claimed attempt, so that one on an attempt this worker lost
// is refused, and the job's queue, which names its shard on Citus.
func (w *httpWorker) run(j claimedJob, workerID string) {
	span := w.startSpan(j)
	defer span.end()
	log := w.log.With(jobLogAttrs(j, span.traceparent)...)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4096}
	cmd, err := startCommand(w.cfg.command, append(os.Environ(), jobEnv(j, w.cfg, workerID, span.traceparent)...),
		bytes.NewReader(j.Payload), &stdout, io.MultiWriter(stderr, os.Stderr))
	if err != nil {
		w.fail(log, j, workerID, "exec", err.Error(), true, nil)
		return
	}
	done := make(chan error, 1)
	go func() { done <- cmd.wait() }()
	stop, err := w.watch(log, j, workerID, cmd, done)
	span.outcome(stop, err)
	switch {
	case stop == "lease lost":
		log.Warn("lease lost: the command was stopped and nothing is reported")
	case stop == "refused":
		// The worker ends: the token no longer works, nothing can be reported.
	case stop == "cancelled":
		w.fail(log, j, workerID, "cancelled", "cancelled by request", false, nil)
	case stop == "paused":
		// The server pauses a job asked to pause whatever its failure says.
		w.fail(log, j, workerID, "paused", "paused by request", true, nil)
	case err == nil:
		w.complete(log, j, workerID, stdout.Bytes())
	default:
		code := -1
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			code = ec.ExitCode()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if code == exitRetryLater {
			d := w.cfg.retryLater
			w.fail(log, j, workerID, "retry_later", msg, true, &d)
			return
		}
		w.fail(log, j, workerID, "exit_status_"+strconv.Itoa(code), msg, true, nil)
	}
}

// watch heartbeats while the command runs and stops it when the job is
// cancelled, its lease is lost or the server refuses the token.
func (w *httpWorker) watch(log *slog.Logger, j claimedJob, workerID string, cmd *jobCommand, done <-chan error) (string, error) {
	tick := time.NewTicker(w.cfg.lease / 3)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return "", err
		case <-tick.C:
			var hb struct {
				CancelRequested bool `json:"cancel_requested"`
				PauseRequested  bool `json:"pause_requested"`
			}
			err := w.call(context.Background(), fmt.Sprintf("/v1/jobs/%d/heartbeat", j.ID),
				map[string]any{"worker_id": workerID, "attempt": j.Attempt, "queue": j.Queue, "lease_seconds": w.cfg.lease.Seconds()}, &hb)
			var he *httpError
			switch {
			case w.refuse(err):
				return "refused", w.terminate(cmd, done)
			case errors.As(err, &he) && (he.status == http.StatusConflict || he.status == http.StatusNotFound):
				return "lease lost", w.terminate(cmd, done)
			case err != nil:
				log.Warn("heartbeat", "error", err)
			case hb.CancelRequested:
				log.Info("job cancelled: stopping the command")
				return "cancelled", w.terminate(cmd, done)
			case hb.PauseRequested:
				log.Info("job paused: stopping the command")
				return "paused", w.terminate(cmd, done)
			}
		}
	}
}

// terminate sends SIGTERM to the command's process group, then SIGKILL
// after the grace period.
func (w *httpWorker) terminate(cmd *jobCommand, done <-chan error) error {
	_ = syscall.Kill(-cmd.pgid, syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-time.After(w.cfg.killGrace):
		_ = syscall.Kill(-cmd.pgid, syscall.SIGKILL)
		return <-done
	}
}

func (w *httpWorker) complete(log *slog.Logger, j claimedJob, workerID string, stdout []byte) {
	body := map[string]any{"worker_id": workerID, "attempt": j.Attempt, "queue": j.Queue}
	if out := bytes.TrimSpace(stdout); len(out) > 0 {
		if json.Valid(out) {
			body["result"] = json.RawMessage(out)
		} else {
			body["result"] = string(out)
		}
	}
	if err := w.report(fmt.Sprintf("/v1/jobs/%d/complete", j.ID), body); err != nil {
		if !w.refuse(err) {
			log.Error("report completion", "error", err)
		}
		return
	}
	log.Info("job completed")
}

func (w *httpWorker) fail(log *slog.Logger, j claimedJob, workerID, typ, msg string, retryable bool, retryIn *time.Duration) {
	body := map[string]any{"worker_id": workerID, "attempt": j.Attempt, "queue": j.Queue,
		"error": map[string]string{"type": typ, "message": msg}, "retryable": retryable}
	if retryIn != nil {
		body["retry_in_seconds"] = retryIn.Seconds()
	}
	if err := w.report(fmt.Sprintf("/v1/jobs/%d/fail", j.ID), body); err != nil {
		if !w.refuse(err) {
			log.Error("report failure", "error", err)
		}
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

func jobEnv(j claimedJob, c *workerConfig, workerID, traceparent string) []string {
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
		"SKIPLOCK_JOB_TRACEPARENT=" + traceparent, "TRACEPARENT=" + traceparent,
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
