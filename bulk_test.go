package skiplock_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/skiplock/skiplock"
)

func TestJobsBulk(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	var ids []int64
	for _, kind := range []string{"a", "b", "a", "a"} {
		res, err := b.client.Insert(b.ctx, skiplock.RawArgs{KindName: kind}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Job.ID)
	}
	bulk := func(p skiplock.BulkParams) skiplock.BulkResult {
		t.Helper()
		res, err := b.client.JobsBulk(b.ctx, p)
		if err != nil {
			t.Fatalf("JobsBulk(%+v): %v", p, err)
		}
		return res
	}
	state := func(id int64) skiplock.JobState {
		t.Helper()
		j, err := b.client.JobGet(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j.State
	}
	kindA := skiplock.BulkFilter{Kinds: []string{"a"}}
	var seen []int
	dry := bulk(skiplock.BulkParams{Action: skiplock.BulkCancel, Filter: kindA, DryRun: true, BatchSize: 2,
		Progress: func(n int) { seen = append(seen, n) }})
	if dry != (skiplock.BulkResult{Matched: 3}) || !slices.Equal(seen, []int{2, 3}) || state(ids[0]) != skiplock.StatePending {
		t.Fatalf("dry run: %+v, progress %v, job %d %s", dry, seen, ids[0], state(ids[0]))
	}
	if got := bulk(skiplock.BulkParams{Action: skiplock.BulkCancel, Filter: kindA, BatchSize: 2}); got != (skiplock.BulkResult{Matched: 3, Done: 3}) {
		t.Fatalf("cancel: %+v", got)
	}
	if state(ids[0]) != skiplock.StateCancelled || state(ids[1]) != skiplock.StatePending {
		t.Fatalf("after cancel: %s %s", state(ids[0]), state(ids[1]))
	}
	// One at a time: the id cursor keeps a retried job from being picked twice.
	if got := bulk(skiplock.BulkParams{Action: skiplock.BulkRetry, Filter: skiplock.BulkFilter{States: []skiplock.JobState{skiplock.StateCancelled}, Kinds: []string{"a"}}, BatchSize: 1}); got.Done != 3 {
		t.Fatalf("retry: %+v", got)
	}
	if state(ids[3]) != skiplock.StatePending {
		t.Fatalf("after retry: %s", state(ids[3]))
	}
	bulk(skiplock.BulkParams{Action: skiplock.BulkCancel, Filter: skiplock.BulkFilter{Kinds: []string{"b"}}})
	if got := bulk(skiplock.BulkParams{Action: skiplock.BulkDelete, Filter: skiplock.BulkFilter{Queues: []string{"default"}}}); got != (skiplock.BulkResult{Matched: 1, Done: 1}) {
		t.Fatalf("delete: %+v", got)
	}
	if _, err := b.client.JobGet(b.ctx, ids[1]); !errors.Is(err, skiplock.ErrNotFound) {
		t.Fatalf("deleted job: %v", err)
	}

	var ve *skiplock.ValidationError
	_, err := b.client.JobsBulk(b.ctx, skiplock.BulkParams{Action: skiplock.BulkDelete})
	if !errors.As(err, &ve) || ve.Field != "filter" {
		t.Fatalf("empty filter: %v", err)
	}
	_, err = b.client.JobsBulk(b.ctx, skiplock.BulkParams{Action: skiplock.BulkDelete, Filter: skiplock.BulkFilter{States: []skiplock.JobState{skiplock.StatePending}}})
	if !errors.As(err, &ve) || ve.Field != "state" {
		t.Fatalf("delete of live jobs: %v", err)
	}
	if state(ids[0]) != skiplock.StatePending {
		t.Fatalf("refused calls changed job %d: %s", ids[0], state(ids[0]))
	}
}
