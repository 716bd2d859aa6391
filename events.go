package skiplock

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// EventKind names what happened to a job, as Subscribe delivers it.
type EventKind string

// The event kinds. Events are about what this client did: the jobs it
// worked, cancelled, or (while it leads) rescued.
const (
	// EventJobCompleted: an attempt succeeded and its completion committed.
	EventJobCompleted EventKind = "job_completed"
	// EventJobFailed: an attempt failed and the job failed for good
	// (permanent error or no retry left).
	EventJobFailed EventKind = "job_failed"
	// EventJobRetried: an attempt failed and the job runs again after its
	// backoff.
	EventJobRetried EventKind = "job_retried"
	// EventJobCancelled: a job ended cancelled, by request while it ran
	// here or through JobCancel on this client.
	EventJobCancelled EventKind = "job_cancelled"
	// EventJobSnoozed: the worker asked to run the job again later (Snooze).
	EventJobSnoozed EventKind = "job_snoozed"
	// EventJobsRescued: the rescuer of this client returned jobs whose
	// lease had expired; Count says how many (Job is nil).
	EventJobsRescued EventKind = "jobs_rescued"
)

// DefaultEventBuffer is how many events a subscription holds for its reader;
// events that find it full are dropped and counted (EventsDropped).
const DefaultEventBuffer = 1024

// Event is one thing that happened to a job.
type Event struct {
	Kind EventKind
	// Job is the job as it is after the event (a copy the reader owns);
	// nil for EventJobsRescued.
	Job *JobRow
	// Err is the attempt's error, for failed, retried and cancelled jobs.
	Err error
	// Count is how many jobs an EventJobsRescued is about.
	Count int
	At    time.Time
}

// eventHub hands events to subscriptions without ever waiting on a reader.
type eventHub struct {
	subs    atomic.Int32 // read on every outcome: zero skips all the work
	dropped atomic.Uint64
	mu      sync.RWMutex
	list    []*subscription
}

type subscription struct {
	ch    chan Event
	kinds []EventKind
}

// Subscribe answers a channel of the events of the given kinds (every kind
// when none is given) and a function that ends the subscription and closes
// the channel. Sending never waits: when the channel's buffer
// (DefaultEventBuffer) is full, the event is dropped and counted in
// EventsDropped. Call cancel when done reading.
func (c *Client) Subscribe(kinds ...EventKind) (<-chan Event, func()) {
	h := &c.events
	sub := &subscription{ch: make(chan Event, DefaultEventBuffer), kinds: slices.Clone(kinds)}
	h.mu.Lock()
	h.list = append(h.list, sub)
	h.subs.Add(1)
	h.mu.Unlock()
	var once sync.Once
	return sub.ch, func() {
		once.Do(func() {
			h.mu.Lock()
			h.list = slices.DeleteFunc(h.list, func(s *subscription) bool { return s == sub })
			h.subs.Add(-1)
			close(sub.ch)
			h.mu.Unlock()
		})
	}
}

// EventsDropped answers how many events were dropped because a
// subscription's buffer was full.
func (c *Client) EventsDropped() uint64 { return c.events.dropped.Load() }

// on reports whether anyone listens, so that callers build events only then.
func (h *eventHub) on() bool { return h.subs.Load() > 0 }

func (h *eventHub) emit(e Event) {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, s := range h.list {
		if len(s.kinds) > 0 && !slices.Contains(s.kinds, e.Kind) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			h.dropped.Add(1)
		}
	}
}

// emitJob sends an event about a copy of job, as state says it ended.
func (h *eventHub) emitJob(kind EventKind, job *JobRow, state JobState, err error) {
	if !h.on() || job == nil {
		return
	}
	cp := *job
	if state != "" && cp.State != state {
		now := time.Now().UTC()
		cp.State = state
		if state.Finished() {
			cp.FinishedAt = &now
		}
	}
	h.emit(Event{Kind: kind, Job: &cp, Err: err})
}

// outcomeEvent is the event kind of a job row written after a failed
// attempt.
func outcomeEvent(j *JobRow) EventKind {
	switch j.State {
	case StateFailed:
		return EventJobFailed
	case StateCancelled:
		return EventJobCancelled
	default:
		return EventJobRetried
	}
}

// emitCompleted sends the event of a job whose completion committed: it
// ended as ended says, else cancelled when it was asked to while it ran
// (such a job ends cancelled whatever its worker answers).
func (c *Client) emitCompleted(r *runningJob, ended JobState) {
	if !c.events.on() {
		return
	}
	if ended == "" {
		ended = StateCompleted
		if r.ctx != nil && errors.Is(context.Cause(r.ctx), ErrCancelled) {
			ended = StateCancelled
		}
	}
	kind := EventJobCompleted
	if ended == StateCancelled {
		kind = EventJobCancelled
	}
	row := *r.row
	if ended == StateCompleted {
		row.Result = r.result
	}
	c.events.emitJob(kind, &row, ended, nil)
}
