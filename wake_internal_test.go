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
		if got, want := trailingIn(sent.Add(since), sent), notifyDebounce-since; got != want {
			t.Errorf("held back %s after a send: due in %s, want %s", since, got, want)
		}
	}
}
