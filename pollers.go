package skiplock

import "sync"

// pollers broadcasts "a queue may have work" to the long-polling claims
// waiting on it: each waiter holds the queue's current channel, which a
// wake-up closes and replaces.
type pollers struct {
	mu    sync.Mutex
	chans map[string]chan struct{}
	// waiters counts the claims waiting on each queue (join, leave): the
	// last to leave drops the queue's channel, so that long polls on
	// queues that never get a job leave nothing behind.
	waiters map[string]int
}

// join counts a claim that may wait on queue until its leave.
func (w *pollers) join(queue string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiters == nil {
		w.waiters = map[string]int{}
	}
	w.waiters[queue]++
}

// leave ends a join; the last claim to leave drops the queue's channel.
func (w *pollers) leave(queue string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiters[queue]--; w.waiters[queue] <= 0 {
		delete(w.waiters, queue)
		delete(w.chans, queue)
	}
}

// wait answers a channel closed at the queue's next wake-up. Take it
// before looking for work, so that a wake-up in between is not missed.
func (w *pollers) wait(queue string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chans == nil {
		w.chans = map[string]chan struct{}{}
	}
	ch := w.chans[queue]
	if ch == nil {
		ch = make(chan struct{})
		w.chans[queue] = ch
	}
	return ch
}

// wake wakes the claims waiting on queue; "" wakes them all.
func (w *pollers) wake(queue string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if queue != "" {
		if ch := w.chans[queue]; ch != nil {
			close(ch)
			delete(w.chans, queue)
		}
		return
	}
	for q, ch := range w.chans {
		close(ch)
		delete(w.chans, q)
	}
}
