package skiplock

import (
	"context"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// notifyDebounce is the least time between two wake-ups of one queue: a bulk
// of inserts sends one, so that commits never queue on NOTIFY's lock.
const notifyDebounce = 5 * time.Millisecond

// waker sends wake-ups for inserted jobs to idle workers, here and in other
// processes.
type waker struct {
	driver driver.Driver
	local  func(queue string)

	mu       sync.Mutex
	lastSent map[string]time.Time
	trailing map[string]bool
}

func newWaker(d driver.Driver, local func(string)) *waker {
	return &waker{driver: d, local: local, lastSent: map[string]time.Time{}, trailing: map[string]bool{}}
}

// insertDone is told of inserted jobs. Committed inserts wake this process's
// workers at once; the others hear through the database (at commit, when
// exec is the caller's transaction).
func (w *waker) insertDone(exec driver.Executor, queues []string, committed bool) {
	if committed {
		for _, q := range queues {
			w.local(q)
		}
	}
	now := time.Now()
	var send []string
	w.mu.Lock()
	for _, q := range queues {
		switch {
		case w.trailing[q]:
		case now.Sub(w.lastSent[q]) >= notifyDebounce:
			w.lastSent[q] = now
			send = append(send, q)
		default:
			w.trailing[q] = true
			time.AfterFunc(notifyDebounce, func() { w.sendTrailing(q) })
		}
	}
	w.mu.Unlock()
	switch {
	case len(send) == 0:
	case committed:
		// Off the insert's path: the caller need not wait a round trip for
		// other processes' wake-up.
		go w.send(w.driver, send)
	default:
		// In the caller's transaction, so that it goes out at commit.
		w.send(exec, send)
	}
}

// send notifies; a lost wake-up costs latency, not jobs: polling finds them.
func (w *waker) send(exec driver.Executor, queues []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = exec.QueueNotify(ctx, queues)
}

func (w *waker) sendTrailing(q string) {
	w.mu.Lock()
	w.trailing[q] = false
	w.lastSent[q] = time.Now()
	w.mu.Unlock()
	w.send(w.driver, []string{q})
}
