package skiplock

import (
	"fmt"
	"testing"
	"time"
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
	w := &waker{lastSent: map[string]time.Time{}}
	old := time.Now().Add(-time.Second)
	for i := range 2 * maxLastSent {
		w.lastSent[fmt.Sprint("q", i)] = old
	}
	now := time.Now()
	w.lastSent["recent"] = now
	w.forgetOld(now)
	if len(w.lastSent) != 1 || w.lastSent["recent"] != now {
		t.Fatalf("%d queues kept, want only the recent one", len(w.lastSent))
	}
}
