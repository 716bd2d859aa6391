package sqlitedriver

import (
	"context"
	"sync"
)

// hubs holds one hub per database file in this process, so that two
// Drivers on one file wake each other. Other processes on the file are not
// told: their polling finds the jobs.
var (
	hubsMu sync.Mutex
	hubs   = map[string]*hub{}
)

func acquireHub(path string) *hub {
	hubsMu.Lock()
	defer hubsMu.Unlock()
	h := hubs[path]
	if h == nil {
		h = &hub{listeners: map[*listener]bool{}}
		hubs[path] = h
	}
	h.refs++
	return h
}

func releaseHub(path string) {
	hubsMu.Lock()
	defer hubsMu.Unlock()
	if h := hubs[path]; h != nil {
		if h.refs--; h.refs <= 0 {
			delete(hubs, path)
		}
	}
}

// hub fans wake-ups and cancel requests out to the listeners on one file.
type hub struct {
	refs      int // guarded by hubsMu
	mu        sync.Mutex
	listeners map[*listener]bool
}

// listener gathers what happened since it last delivered; a burst of
// inserts into one queue becomes one wake-up.
type listener struct {
	mu      sync.Mutex
	queues  map[string]bool
	cancels []int64
	signal  chan struct{}
}

func (h *hub) each(fn func(l *listener)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.listeners {
		l.mu.Lock()
		fn(l)
		l.mu.Unlock()
		select {
		case l.signal <- struct{}{}:
		default:
		}
	}
}

func (h *hub) insert(queues []string) {
	h.each(func(l *listener) {
		for _, q := range queues {
			l.queues[q] = true
		}
	})
}

func (h *hub) cancel(id int64) {
	h.each(func(l *listener) { l.cancels = append(l.cancels, id) })
}

type notifier struct{ h *hub }

// NotifyCancel tells the listeners on this file in this process; clients
// running jobs elsewhere look for stop requests every second.
func (n notifier) NotifyCancel(ctx context.Context, id int64) error {
	n.h.cancel(id)
	return nil
}

func (n notifier) Listen(ctx context.Context, onInsert func(queue string), onCancel func(id int64)) error {
	l := &listener{queues: map[string]bool{}, signal: make(chan struct{}, 1)}
	n.h.mu.Lock()
	n.h.listeners[l] = true
	n.h.mu.Unlock()
	defer func() {
		n.h.mu.Lock()
		delete(n.h.listeners, l)
		n.h.mu.Unlock()
	}()
	onInsert("") // what was inserted before this listener joined woke nobody
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.signal:
		}
		l.mu.Lock()
		queues, cancels := l.queues, l.cancels
		l.queues, l.cancels = map[string]bool{}, nil
		l.mu.Unlock()
		for q := range queues {
			onInsert(q)
		}
		for _, id := range cancels {
			onCancel(id)
		}
	}
}
