package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// Event feed tuning: each poll looks back eventOverlap so that a change
// committed late (its updated_at is its transaction's start) is not missed;
// what was already sent is recognised and skipped.
const (
	eventOverlap    = 2 * time.Second
	eventPollLimit  = 5000
	eventBuffer     = 1024
	eventKeepAlive  = 15 * time.Second
	eventMaxStreams = 1000
)

// jobEvent is the data of an `event: job`, built by the library from the
// job's view.
type jobEvent = skiplock.JobEvent

type eventKey struct {
	id       int64
	at       time.Time
	state    skiplock.JobState
	progress int
}

// subscriber is one event stream and its filters.
type subscriber struct {
	ch                    chan *jobEvent
	queue, kind, workflow string
	tenant                *string
}

func (sub *subscriber) wants(e *jobEvent) bool {
	return (sub.queue == "" || sub.queue == e.Queue) && (sub.kind == "" || sub.kind == e.Kind) &&
		(sub.workflow == "" || (e.WorkflowID != nil && *e.WorkflowID == sub.workflow)) &&
		(sub.tenant == nil || *sub.tenant == e.Tenant)
}

// eventHub polls JobChangedSince while anyone listens and fans the
// changes out to the subscribers.
type eventHub struct {
	feed     changeFeed
	interval time.Duration
	log      *slog.Logger

	mu     sync.Mutex
	subs   map[*subscriber]bool
	stop   context.CancelFunc
	done   chan struct{}
	closed bool
}

// changeFeed answers changed jobs (Client.JobsChangedSince).
type changeFeed interface {
	JobsChangedSince(ctx context.Context, since time.Time, limit int) ([]*skiplock.JobRow, error)
}

func newEventHub(feed changeFeed, interval time.Duration, log *slog.Logger) *eventHub {
	return &eventHub{feed: feed, interval: interval, log: log, subs: map[*subscriber]bool{}}
}

func (h *eventHub) subscribe(sub *subscriber) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: "server is shutting down"}
	}
	if len(h.subs) >= eventMaxStreams {
		return &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: "too many event streams"}
	}
	h.subs[sub] = true
	if h.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		h.stop, h.done = cancel, done
		go func() { defer close(done); h.poll(ctx) }()
	}
	return nil
}

func (h *eventHub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, sub)
	if len(h.subs) == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// close ends the poller; streams see it through the server's context.
func (h *eventHub) close() {
	h.mu.Lock()
	h.closed = true
	stop, done := h.stop, h.done
	h.stop = nil
	h.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (h *eventHub) poll(ctx context.Context) {
	cursor := time.Now().Add(-time.Second)
	seen := map[eventKey]time.Time{}
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	full := false
	for {
		since := cursor.Add(-eventOverlap)
		if full {
			since = cursor // a backlog: move on rather than re-read it
		}
		jobs, err := h.feed.JobsChangedSince(ctx, since, eventPollLimit)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			h.log.Warn("event feed: read changes", "error", err)
		}
		full = len(jobs) == eventPollLimit
		for _, j := range jobs {
			k := eventKey{id: j.ID, at: j.UpdatedAt, state: j.State, progress: j.Progress}
			if _, ok := seen[k]; ok {
				continue
			}
			seen[k] = j.UpdatedAt
			// A time past now (a row written by other means, years ahead)
			// must not carry the cursor past every change to come.
			if now := time.Now(); j.UpdatedAt.After(now) {
				cursor = now
			} else if j.UpdatedAt.After(cursor) {
				cursor = j.UpdatedAt
			}
			h.publish(skiplock.NewJobEvent(j))
		}
		for k, at := range seen {
			if at.Before(cursor.Add(-2 * eventOverlap)) {
				delete(seen, k)
			}
		}
		if !full {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}
}

// publish hands an event to every subscriber that wants it; a subscriber
// too slow to keep up loses events rather than holding the others back.
func (h *eventHub) publish(e *jobEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		if sub.wants(e) {
			select {
			case sub.ch <- e:
			default:
			}
		}
	}
}

func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, p *principal) error {
	q := r.URL.Query()
	sub := &subscriber{ch: make(chan *jobEvent, eventBuffer), queue: q.Get("queue"), kind: q.Get("kind"),
		workflow: q.Get("workflow_id"), tenant: p.tenantFilter(nil)}
	for field, v := range map[string]string{"queue": sub.queue, "kind": sub.kind, "workflow_id": sub.workflow} {
		if err := input.CheckText(field, v, input.MaxKeyBytes); err != nil {
			return err
		}
	}
	if err := s.events.subscribe(sub); err != nil {
		return err
	}
	defer s.events.unsubscribe(sub)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, ": connected\n\n"); err != nil {
		return nil
	}
	_ = rc.Flush()
	keepAlive := time.NewTicker(eventKeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.ctx.Done():
			return nil
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
		case e := <-sub.ch:
			b, _ := json.Marshal(e)
			if _, err := fmt.Fprintf(w, "event: job\ndata: %s\n\n", b); err != nil {
				return nil
			}
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
	}
}
