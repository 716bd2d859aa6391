package skiplock

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// notifyLog is a driver that records the wake-ups it sent.
type notifyLog struct {
	driver.Driver
	mu   sync.Mutex
	sent [][]string
}

func (d *notifyLog) QueueNotify(ctx context.Context, queues []string) error {
	err := d.Driver.QueueNotify(ctx, queues)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sent = append(d.sent, slices.Clone(queues))
	return err
}

// TestFlushSendsTrailingWakeUpsAtOnce: wake-ups waiting out their debounce
// go out when the waker is flushed, in one notification, and nothing of the
// waker is left running.
func TestFlushSendsTrailingWakeUpsAtOnce(t *testing.T) {
	t.Parallel()
	pg, _ := pgtest.Schema(t)
	drv := &notifyLog{Driver: pg}
	w := newWaker(drv, func(string) {})
	w.mu.Lock()
	for _, q := range []string{"a", "b"} {
		w.lastSent[q] = time.Now().Add(time.Hour) // just sent, as far as the debounce can tell
	}
	w.mu.Unlock()
	w.insertDone(drv, []string{"a", "b"}, true)
	w.insertDone(drv, []string{"a"}, true)
	if err := w.flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	drv.mu.Lock()
	sent := drv.sent
	drv.mu.Unlock()
	if len(sent) != 1 {
		t.Fatalf("notifications %v, want one for a and b", sent)
	}
	slices.Sort(sent[0])
	if !slices.Equal(sent[0], []string{"a", "b"}) {
		t.Fatalf("notified %v, want a and b", sent[0])
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending != 0 || len(w.trailing) != 0 {
		t.Fatalf("after flush: %d wake-ups pending, %d trailing", w.pending, len(w.trailing))
	}
}

// A wake-up held back by the debounce goes out when the debounce since the
// last send ends, not a whole debounce after the insert that was held back.
func TestTrailingWakeUpDueWhenTheDebounceEnds(t *testing.T) {
	sent := time.Now()
	for _, since := range []time.Duration{0, notifyDebounce / 4, notifyDebounce / 2, notifyDebounce * 9 / 10} {
		if got, want := trailingIn(sent.Add(since), sent, notifyDebounce), notifyDebounce-since; got != want {
			t.Errorf("held back %s after a send: due in %s, want %s", since, got, want)
		}
	}
}

// gatedNotify is a driver whose wake-ups wait for a word on gate before
// they go out, and that counts them.
type gatedNotify struct {
	driver.Driver
	gate chan struct{}
	mu   sync.Mutex
	sent [][]string
}

func (d *gatedNotify) QueueNotify(ctx context.Context, queues []string) error {
	select {
	case <-d.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sent = append(d.sent, slices.Clone(queues))
	return nil
}

func (d *gatedNotify) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.sent)
}

// TestWakeUpWaitsForTheOneOnItsWay: while a queue's wake-up is on its way,
// the inserts that follow send none of their own; one wake-up goes for all
// of them once it has returned, and then none is left on its way or owed.
func TestWakeUpWaitsForTheOneOnItsWay(t *testing.T) {
	t.Parallel()
	drv := &gatedNotify{gate: make(chan struct{})}
	w := newWaker(drv, func(string) {})
	if err := w.insertDone(drv, []string{"a"}, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * notifyDebounce) // its debounce has passed; the send has not returned
	for range 3 {
		if err := w.insertDone(drv, []string{"a"}, true); err != nil {
			t.Fatal(err)
		}
	}
	if w.takeDue("a") {
		t.Fatal("takeDue answered a wake-up due while one is on its way")
	}
	w.mu.Lock()
	owed, pending := w.owed["a"], w.pending
	w.mu.Unlock()
	if !owed || pending != 2 {
		t.Fatalf("while a wake-up is on its way: owed %v, pending %d; want true, 2", owed, pending)
	}
	drv.gate <- struct{}{} // the first returns; the owed one goes
	drv.gate <- struct{}{} // and returns
	if err := w.flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := drv.count(); n != 2 {
		t.Fatalf("%d wake-ups sent, want 2: the first and one for the three inserts after it", n)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending != 0 || len(w.onWay) != 0 || len(w.owed) != 0 {
		t.Fatalf("after flush: pending %d, on their way %v, owed %v", w.pending, w.onWay, w.owed)
	}
}

// TestCarriedWakeUpReturns: a wake-up taken for an insert that failed, or
// that went out with its job, is no longer on its way; one the driver did
// not carry is sent, and returns.
func TestCarriedWakeUpReturns(t *testing.T) {
	t.Parallel()
	drv := &gatedNotify{gate: make(chan struct{}, 1)}
	w := newWaker(drv, func(string) {})
	for _, c := range []struct {
		name            string
		inserted, woken bool
		sends           int
	}{{"failed insert", false, false, 0}, {"carried", true, true, 0}, {"not carried", true, false, 1}} {
		time.Sleep(2 * notifyDebounce)
		if !w.takeDue("a") {
			t.Fatalf("%s: no wake-up due", c.name)
		}
		before := drv.count()
		if c.sends > 0 {
			drv.gate <- struct{}{}
		}
		w.carried("a", c.inserted, c.woken)
		if err := w.flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := drv.count() - before; n != c.sends {
			t.Errorf("%s: %d wake-ups sent, want %d", c.name, n, c.sends)
		}
		w.mu.Lock()
		onWay := w.onWay["a"]
		w.mu.Unlock()
		if onWay {
			t.Errorf("%s: the wake-up is still on its way", c.name)
		}
	}
}

// TestInTxWakeUpsSpacedByAMillisecond: a wake-up in a caller's transaction,
// which holds NOTIFY's lock through that commit, is held back for
// notifyInTxSpacing after the last (it goes later, outside the transaction);
// a committed insert's is not. The waker's clock stands still, so that a
// slow machine cannot let the spacing pass.
func TestInTxWakeUpsSpacedByAMillisecond(t *testing.T) {
	t.Parallel()
	drv := &gatedNotify{gate: make(chan struct{}, 2)}
	drv.gate <- struct{}{}
	drv.gate <- struct{}{}
	tx := &gatedNotify{gate: make(chan struct{}, 1)} // the caller's transaction
	tx.gate <- struct{}{}
	w := newWaker(drv, func(string) {})
	at := time.Now()
	w.now = func() time.Time { return at }
	w.mu.Lock()
	w.lastSent["tx"] = at.Add(-2 * notifyDebounce)
	w.lastSent["committed"] = at.Add(-2 * notifyDebounce)
	w.mu.Unlock()
	if err := w.insertDone(tx, []string{"tx"}, false); err != nil {
		t.Fatal(err)
	}
	if n := tx.count(); n != 0 {
		t.Fatalf("an in-transaction wake-up went out in the transaction %s after the last", 2*notifyDebounce)
	}
	if err := w.insertDone(drv, []string{"committed"}, true); err != nil {
		t.Fatal(err)
	}
	if err := w.flush(t.Context()); err != nil { // sends the held-back one at once
		t.Fatal(err)
	}
	if n := drv.count(); n != 2 {
		t.Fatalf("%d wake-ups sent, want the committed insert's and the held-back one", n)
	}
}
