package skiplock_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/internal/pgtest"
)

const testContracts = `
version: 1
strict: true
defaults: {max_retries: 2, lease: 2m, backoff: {type: fixed, delay: 10ms}}
kinds:
  file:
    queue: ingest
    priority: 7
    ops: [ingest, update, delete]
    payload:
      type: object
      required: [file_path, collection]
      properties:
        file_path: {type: string, minLength: 1}
        collection: {type: string}
        size_bytes: {type: integer, minimum: 0}
    unique: {policy: active, scope: [payload.collection], fields: [payload.file_path]}
  library:
    ops: [ingest]
    payload: {type: object, required: [name]}
    unique: {policy: window, window: 1h, fields: [payload.name]}
`

func contractClient(t *testing.T) (*skiplock.Client, context.Context) {
	t.Helper()
	set, err := contract.Parse([]byte(testContracts))
	if err != nil {
		t.Fatal(err)
	}
	drv, _ := pgtest.Schema(t)
	c, err := skiplock.NewClient(drv, &skiplock.Config{Contracts: set})
	if err != nil {
		t.Fatal(err)
	}
	return c, context.Background()
}

func raw(kind, payload string) skiplock.RawArgs {
	return skiplock.RawArgs{KindName: kind, Payload: json.RawMessage(payload)}
}

func TestContractsDefaultAndValidate(t *testing.T) {
	t.Parallel()
	c, ctx := contractClient(t)
	res, err := c.Insert(ctx, raw("file", `{"file_path":"/a.go","collection":"code"}`), &skiplock.InsertOpts{Op: "ingest"})
	if err != nil {
		t.Fatal(err)
	}
	j := res.Job
	if j.Queue != "ingest" || j.Priority != 7 || j.MaxRetries != 2 || j.IdempotencyKey == "" {
		t.Fatalf("defaults did not flow from the contract: %+v", j)
	}
	// Explicit values win within their ranges.
	res, err = c.Insert(ctx, raw("file", `{"file_path":"/b.go","collection":"code"}`),
		&skiplock.InsertOpts{Op: "update", Queue: "urgent", Priority: skiplock.Int(10)})
	if err != nil || res.Job.Queue != "urgent" || res.Job.Priority != 10 {
		t.Fatalf("override: %+v %v", res, err)
	}
	rejects := []struct {
		args  skiplock.RawArgs
		opts  *skiplock.InsertOpts
		field string
	}{
		{raw("fil", `{}`), nil, "kind"},
		{raw("file", `{"file_path":"/a","collection":"c"}`), &skiplock.InsertOpts{Op: "scan"}, "op"},
		{raw("file", `{"file_path":"/a","collection":"c"}`), nil, "op"},
		{raw("file", `{"collection":"c"}`), &skiplock.InsertOpts{Op: "ingest"}, "payload.file_path"},
		{raw("file", `{"file_path":"/a","collection":"c","size_bytes":-1}`), &skiplock.InsertOpts{Op: "ingest"}, "payload.size_bytes"},
		{raw("file", `{"file_path":"/a","collection":"c"}`), &skiplock.InsertOpts{Op: "ingest", Priority: skiplock.Int(12)}, "priority"},
	}
	for _, r := range rejects {
		_, err := c.Insert(ctx, r.args, r.opts)
		var ve *skiplock.ValidationError
		if !errors.As(err, &ve) || ve.Field != r.field {
			t.Errorf("%s %s: got %v, want a ValidationError on %s", r.args.KindName, r.args.Payload, err, r.field)
		}
	}
	jobs, _ := c.JobList(ctx, skiplock.JobListParams{})
	if len(jobs) != 2 {
		t.Fatalf("rejected jobs were stored: %d jobs", len(jobs))
	}
}

func TestContractsUniqueness(t *testing.T) {
	t.Parallel()
	c, ctx := contractClient(t)
	a := raw("file", `{"file_path":"/a.go","collection":"code"}`)
	first, err := c.Insert(ctx, a, &skiplock.InsertOpts{Op: "ingest"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Insert(ctx, a, &skiplock.InsertOpts{Op: "update"})
	if err != nil || !again.Duplicate || again.Job.ID != first.Job.ID {
		t.Fatalf("active duplicate: %+v %v", again, err)
	}
	other, _ := c.Insert(ctx, raw("file", `{"file_path":"/a.go","collection":"docs"}`), &skiplock.InsertOpts{Op: "ingest"})
	if other.Duplicate {
		t.Fatal("another scope must not collide")
	}
	// Window: a finished job still holds its key.
	lib, err := c.Insert(ctx, raw("library", `{"name":"pgx"}`), &skiplock.InsertOpts{Op: "ingest"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.JobCancel(ctx, lib.Job.ID); err != nil {
		t.Fatal(err)
	}
	dup, err := c.Insert(ctx, raw("library", `{"name":"pgx"}`), &skiplock.InsertOpts{Op: "ingest"})
	if err != nil || !dup.Duplicate || dup.Job.ID != lib.Job.ID || dup.Job.State != skiplock.StateCancelled {
		t.Fatalf("window duplicate: %+v %v", dup, err)
	}
}

type fileArgs struct {
	FilePath   string `json:"file_path"`
	Collection string `json:"collection"`
}

func (fileArgs) Kind() string { return "file" }

// The contract's backoff and retries govern a failing job.
func TestContractsRetryPolicy(t *testing.T) {
	t.Parallel()
	set, _ := contract.Parse([]byte(testContracts))
	drv, _ := pgtest.Schema(t)
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[fileArgs](func(context.Context, *skiplock.Job[fileArgs]) error {
		return errors.New("flaky")
	}))
	c, err := skiplock.NewClient(drv, &skiplock.Config{Contracts: set, Workers: workers,
		Queues: map[string]skiplock.QueueConfig{"ingest": {}}, FetchPollInterval: 20 * time.Millisecond,
		SchedulerInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{drv: drv, client: c, ctx: context.Background()}
	b.start(t)
	res, err := c.Insert(b.ctx, fileArgs{FilePath: "/x", Collection: "c"}, &skiplock.InsertOpts{Op: "ingest"})
	if err != nil {
		t.Fatal(err)
	}
	j := waitState(t, b, res.Job.ID, skiplock.StateFailed)
	if j.Attempt != 3 || len(j.Errors) != 3 {
		t.Fatalf("want 3 attempts (max_retries 2): %+v", j)
	}
}
