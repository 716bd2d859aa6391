package skiplock_test

import (
	"errors"
	"testing"

	"github.com/skiplock/skiplock"
)

// A queue is known by its settings or by any job, live or archived; pausing
// or resuming any other name answers ErrNotFound and stores nothing, unless
// the caller asks to create the queue.
func TestQueuePauseRefusesUnknownQueue(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		b.insert(t, c, taskArgs{}, &skiplock.InsertOpts{Queue: "live"})
		done := b.insert(t, c, taskArgs{}, &skiplock.InsertOpts{Queue: "archived"})
		if jobs, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "archived", WorkerID: "w", Max: 1}); err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %d jobs, %v", len(jobs), err)
		}
		if _, _, err := c.Complete(b.ctx, done.ID, skiplock.CompleteParams{WorkerID: "w"}); err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{c.QueuePause(b.ctx, "typo"), c.QueueResume(b.ctx, "typo")} {
			if !errors.Is(err, skiplock.ErrNotFound) || err.Error() != `queue "typo": not found (it has no settings and no jobs)` {
				t.Fatalf("unknown queue: %v", err)
			}
		}
		for _, q := range []string{"live", "archived"} {
			if err := c.QueuePause(b.ctx, q); err != nil {
				t.Fatalf("pause %s: %v", q, err)
			}
		}
		if err := c.QueuePause(b.ctx, "ahead", skiplock.QueueActionOpts{Create: true}); err != nil {
			t.Fatal(err)
		}
		queues, err := c.QueueList(b.ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, q := range queues {
			names = append(names, q.Name)
			if !q.Paused {
				t.Errorf("queue %s is not paused", q.Name)
			}
		}
		if len(names) != 3 || names[0] != "ahead" || names[1] != "archived" || names[2] != "live" {
			t.Fatalf("queues %v, want ahead, archived, live", names)
		}
	})
}
