package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// `jobs show` prints a finished job's result, and no trailing space after a
// progress without a message.
func TestJobDetailShowsResult(t *testing.T) {
	now := time.Now()
	j := &skiplock.JobRow{ID: 7, Kind: "greet", Queue: "default", State: skiplock.StateCompleted, Attempt: 1, MaxRetries: 3,
		Payload: json.RawMessage(`{"name":"Ada"}`), Result: json.RawMessage(`{"greeting": "hello, Ada"}`), Progress: 100,
		RunAt: now, CreatedAt: now, UpdatedAt: now, FinishedAt: &now}
	var b bytes.Buffer
	if err := jobDetail(j)(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, `{"greeting": "hello, Ada"}`) || !strings.Contains(out, "result") {
		t.Fatalf("no result line:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Fatalf("trailing space in %q", line)
		}
	}
	j.Result = nil
	b.Reset()
	if err := jobDetail(j)(&b); err != nil || strings.Contains(b.String(), "result") {
		t.Fatalf("a job without a result shows one: %v\n%s", err, b.String())
	}
}

// The worker's start line names the ids its loops claim as, as jobs record
// them.
func TestWorkerIDsAsJobsRecordThem(t *testing.T) {
	if got := workerIDs("h-1-worker", 1); got != "h-1-worker-0" {
		t.Errorf("one loop: %q", got)
	}
	if got := workerIDs("h-1-worker", 8); got != "h-1-worker-0…h-1-worker-7" {
		t.Errorf("eight loops: %q", got)
	}
}
