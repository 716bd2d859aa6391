package server

import "sync"

// queueWaker broadcasts "a queue may have work" to the long polls waiting
// on it: each waiter holds the queue's current channel, which a wake-up
// closes and replaces.
type queueWaker struct {
	mu    sync.Mutex
	chans map[string]chan struct{}
}

func newQueueWaker() *queueWaker {
	return &queueWaker{chans: map[string]chan struct{}{}}
}

// wait answers a channel closed at the queue's next wake-up. Take it
// before looking for work, so that a wake-up in between is not missed.
func (w *queueWaker) wait(queue string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.chans[queue]
	if ch == nil {
		ch = make(chan struct{})
		w.chans[queue] = ch
	}
	return ch
}

// wake wakes the long polls on queue; "" wakes them all.
func (w *queueWaker) wake(queue string) {
	if queue == "" {
		w.wakeAll()
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch := w.chans[queue]; ch != nil {
		close(ch)
		delete(w.chans, queue)
	}
}

func (w *queueWaker) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for q, ch := range w.chans {
		close(ch)
		delete(w.chans, q)
	}
}
