package skiplocktest

import (
	"context"
	"testing"

	"github.com/skiplock/skiplock"
)

// Work inserts a job of args through client and works it at once with
// worker on the calling goroutine (see skiplock.WorkJob), and answers what
// became of it: Outcome.Err is the worker's error, Outcome.Job the job as
// stored after the attempt. It fails t when the job cannot be inserted or
// recorded. The client need not be started nor have worker registered.
func Work[T skiplock.JobArgs](ctx context.Context, t testing.TB, client *skiplock.Client, worker skiplock.Worker[T], args T, opts *skiplock.InsertOpts) *skiplock.Outcome {
	t.Helper()
	o, err := skiplock.WorkJob(ctx, client, worker, args, opts)
	if err != nil {
		t.Fatalf("skiplocktest: work job of kind %q: %v", args.Kind(), err)
	}
	return o
}

// Drain works every job due now in client's queues with its registered
// workers, one at a time, and answers what became of each in the order they
// ran (see Client.Drain). It fails t on a database error.
func Drain(ctx context.Context, t testing.TB, client *skiplock.Client) []skiplock.Outcome {
	t.Helper()
	out, err := client.Drain(ctx)
	if err != nil {
		t.Fatalf("skiplocktest: drain: %v", err)
	}
	return out
}
