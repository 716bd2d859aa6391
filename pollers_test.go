package skiplock

import (
	"fmt"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// A wake-up of one queue closes that queue's channel only; "" closes all.
func TestPollersWakeOneQueueOrAll(t *testing.T) {
	var p pollers
	a, b := p.wait("a"), p.wait("b")
	p.wake("a")
	select {
	case <-a:
	default:
		t.Fatal("queue a's waiters not woken")
	}
	select {
	case <-b:
		t.Fatal("queue b's waiters woken by a wake-up of a")
	default:
	}
	if p.wait("b") != b {
		t.Fatal("queue b got a new channel")
	}
	p.wake("")
	<-b
	if len(p.chans) != 0 {
		t.Fatalf("%d channels left after waking all", len(p.chans))
	}
}

// The waker forgets the wake-ups of queues older than the debounce once it
// knows many queues: a process inserting into ever new queue names keeps a
// bounded map.
func TestWakerForgetsOldQueues(t *testing.T) {
	d := sqlitetest.New(t)
	w := newWaker(d, func(string) {})
	for i := range 4 * maxLastSent {
		if err := w.insertDone(d, []string{fmt.Sprint("q", i)}, false); err != nil {
			t.Fatal(err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lastSent) >= 2*maxLastSent {
		t.Fatalf("%d queues kept after %d, want fewer than %d", len(w.lastSent), 4*maxLastSent, 2*maxLastSent)
	}
}

// A claim that waits in vain on a queue that never gets a job, and one that
// does not wait, leave no channel behind.
func TestClaimsLeaveNoPollChannel(t *testing.T) {
	c, err := NewClient(sqlitetest.New(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, wait := range []time.Duration{0, 50 * time.Millisecond} {
		if _, err := c.Claim(ctx, ClaimParams{Queue: fmt.Sprint("nothing-", wait), WorkerID: "w", Max: 1, Wait: wait}); err != nil {
			t.Fatal(err)
		}
	}
	c.pollers.mu.Lock()
	defer c.pollers.mu.Unlock()
	if len(c.pollers.chans) != 0 || len(c.pollers.waiters) != 0 {
		t.Fatalf("%d channels and %d waiter counts left", len(c.pollers.chans), len(c.pollers.waiters))
	}
}
