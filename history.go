package skiplock

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// DefaultHistoryFlushInterval is how often a client adds the attempts that
// ended on it to the history table (docs/dashboard.md): a crash loses at
// most this much of the history; Stop adds the rest.
const DefaultHistoryFlushInterval = 5 * time.Second

// historyKey is one row of the history: a minute, a queue, a kind and an
// outcome.
type historyKey struct {
	minute  int64 // Unix seconds of the minute
	queue   string
	kind    string
	outcome string
}

type historyCounts struct {
	n         int64
	wait, run [driver.HistoryBuckets]int64
}

// historyRecorder adds up, in memory and per minute, the attempts that end
// on this client, for the history table; a flush writes them in one
// statement. Without a HistoryStore it records nothing.
type historyRecorder struct {
	store driver.HistoryStore
	mu    sync.Mutex
	rows  map[historyKey]*historyCounts
}

func (h *historyRecorder) init(e driver.Executor) {
	if st, err := driver.As[driver.HistoryStore](e); err == nil {
		h.store = st
	}
}

// recordRun records the end of the attempt a row was claimed as: its wait
// is from its run_at to its start, its run from its start to now.
func (h *historyRecorder) recordRun(row *JobRow, outcome string) {
	if h.store == nil || row == nil || outcome == "" {
		return
	}
	var start time.Time
	if row.StartedAt != nil {
		start = *row.StartedAt
	}
	h.record(row.Queue, row.Kind, outcome, row.RunAt, start, time.Now())
}

// recordReported records the end of an attempt an HTTP worker reported,
// from the job as the report left it: a finished job keeps its run_at and
// start; one that waits to run again is counted without its times.
func (h *historyRecorder) recordReported(row *JobRow) {
	if h.store == nil || row == nil {
		return
	}
	outcome := historyOutcome(row)
	if row.State == StateCompleted {
		outcome = driver.HistoryCompleted
	}
	var start time.Time
	end := time.Now()
	if row.StartedAt != nil && row.FinishedAt != nil {
		start, end = *row.StartedAt, *row.FinishedAt
	}
	h.record(row.Queue, row.Kind, outcome, row.RunAt, start, end)
}

// recordCompleted records a job an HTTP worker's batch report finished,
// from what the statement that finished it answered; it ended now.
func (h *historyRecorder) recordCompleted(j driver.CompletedJob) {
	if h.store == nil {
		return
	}
	outcome := driver.HistoryCompleted
	if j.State == driver.StateCancelled {
		outcome = driver.HistoryCancelled
	}
	h.record(j.Queue, j.Kind, outcome, j.RunAt, j.StartedAt, time.Now())
}

// record adds one attempt; a zero start counts it without its times.
func (h *historyRecorder) record(queue, kind, outcome string, due, start, end time.Time) {
	if h.store == nil || outcome == "" {
		return
	}
	k := historyKey{minute: end.Unix() - end.Unix()%60, queue: queue, kind: kind, outcome: outcome}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rows == nil {
		h.rows = map[historyKey]*historyCounts{}
	}
	c := h.rows[k]
	if c == nil {
		c = &historyCounts{}
		h.rows[k] = c
	}
	c.n++
	if !start.IsZero() {
		c.wait[driver.HistoryBucket(max(start.Sub(due), 0))]++
		c.run[driver.HistoryBucket(max(end.Sub(start), 0))]++
	}
}

// take answers the counts gathered so far, sorted (two clients adding to
// the same rows lock them in one order), and starts over.
func (h *historyRecorder) take() []driver.HistoryCount {
	h.mu.Lock()
	rows := h.rows
	h.rows = nil
	h.mu.Unlock()
	out := make([]driver.HistoryCount, 0, len(rows))
	for k, c := range rows {
		out = append(out, driver.HistoryCount{Minute: time.Unix(k.minute, 0).UTC(), Queue: k.queue, Kind: k.kind,
			Outcome: k.outcome, N: c.n, Wait: c.wait[:], Run: c.run[:]})
	}
	slices.SortFunc(out, func(a, b driver.HistoryCount) int {
		return cmp.Or(a.Minute.Compare(b.Minute), cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Outcome, b.Outcome))
	})
	return out
}

// putBack returns counts a flush could not write, to go with the next one.
func (h *historyRecorder) putBack(counts []driver.HistoryCount) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rows == nil {
		h.rows = map[historyKey]*historyCounts{}
	}
	for _, hc := range counts {
		k := historyKey{minute: hc.Minute.Unix(), queue: hc.Queue, kind: hc.Kind, outcome: hc.Outcome}
		c := h.rows[k]
		if c == nil {
			c = &historyCounts{}
			h.rows[k] = c
		}
		c.n += hc.N
		for i := range driver.HistoryBuckets {
			c.wait[i] += hc.Wait[i]
			c.run[i] += hc.Run[i]
		}
	}
}

// flush writes what was gathered; what it could not write waits for the
// next flush.
func (h *historyRecorder) flush(ctx context.Context) error {
	if h.store == nil {
		return nil
	}
	counts := h.take()
	if len(counts) == 0 {
		return nil
	}
	if err := h.store.HistoryAdd(ctx, counts); err != nil {
		h.putBack(counts)
		return err
	}
	return nil
}

// historyLoop flushes the history every DefaultHistoryFlushInterval until
// ctx ends; Stop flushes the rest after the completions.
func (c *Client) historyLoop(ctx context.Context) {
	t := time.NewTicker(DefaultHistoryFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.history.flush(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("history: add the attempts that ended", "error", err)
			}
		}
	}
}

// flushHistory writes the history gathered so far at once: Stop's last
// flush, and the end of a job worked by a client that was not started
// (Drain, WorkJob), which has no flush loop.
func (c *Client) flushHistory(ctx context.Context) {
	if err := c.history.flush(ctx); err != nil {
		c.log.Warn("history: add the attempts that ended", "error", err)
	}
}

// completedOutcome names the outcome of a job whose completion committed:
// cancelled when it was asked to while it ran, as the statement decides.
func completedOutcome(r *runningJob) string {
	if r.ctx != nil && errors.Is(context.Cause(r.ctx), ErrCancelled) {
		return driver.HistoryCancelled
	}
	return driver.HistoryCompleted
}

// flushHistoryUnstarted flushes the history of a job worked by a client
// that was not started (Drain, WorkJob), which has no flush loop.
func (c *Client) flushHistoryUnstarted(ctx context.Context) {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if !started {
		c.flushHistory(ctx)
	}
}

// historyOutcome names the outcome of a job row written after a failed
// attempt.
func historyOutcome(j *JobRow) string {
	switch j.State {
	case StateFailed:
		return driver.HistoryFailed
	case StateCancelled:
		return driver.HistoryCancelled
	case StatePending, StateScheduled:
		return driver.HistoryRetried
	}
	return "" // paused, as it was asked to: not an outcome
}
