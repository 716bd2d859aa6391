// Package completer flushes job completions in batches: a job counts as
// done only when the batch holding it commits.
package completer

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Config tunes a Completer.
type Config struct {
	// BatchSize is the most completions in one statement.
	BatchSize int
	// OnFlushed gets each flushed batch and the ids that completed; the
	// others had lost their lease.
	OnFlushed func(batch []driver.CompleteParams, completed []int64)
	Logger    *slog.Logger
}

// Completer batches completions. While one batch flushes the next gathers,
// so batches grow with load and stay single jobs when idle (group commit).
type Completer struct {
	exec driver.JobStore
	cfg  Config
	in   chan driver.CompleteParams
	done chan struct{}
	// stopping, closed as Stop begins, frees Adds blocked on a full queue
	// (a database that is down) so that Stop can close it.
	stopping chan struct{}
	// abandon, closed when Stop's ctx ends first, ends the flush loop
	// without writing: the unflushed jobs run again after their leases.
	abandon    context.Context
	abandonNow context.CancelFunc
	stopOnce   sync.Once

	// mu guards closed: Add after Stop must not send on a closed channel.
	mu     sync.RWMutex
	closed bool
}

// New returns a completer writing through exec.
func New(exec driver.JobStore, cfg Config) *Completer {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 1000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Completer{exec: exec, cfg: cfg, in: make(chan driver.CompleteParams, cfg.BatchSize*4),
		done: make(chan struct{}), stopping: make(chan struct{})}
	c.abandon, c.abandonNow = context.WithCancel(context.Background())
	return c
}

// Start runs the flush loop until Stop.
func (c *Completer) Start() { go c.run() }

// Add queues a completion; it blocks when the completer is behind, which
// holds back the workers (backpressure). Once Stop has begun it answers
// false and the job runs again once its lease expires.
func (c *Completer) Add(p driver.CompleteParams) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return false
	}
	select {
	case c.in <- p:
		return true
	case <-c.stopping:
		return false
	}
}

// Stop flushes what is queued and returns when done or when ctx ends (the
// unflushed jobs then run again after their lease expires, and the flush
// loop ends without writing them).
func (c *Completer) Stop(ctx context.Context) error {
	c.stopOnce.Do(func() { close(c.stopping) })
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.in)
	}
	c.mu.Unlock()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		c.abandonNow()
		return ctx.Err()
	}
}

func (c *Completer) run() {
	defer close(c.done)
	batch := make([]driver.CompleteParams, 0, c.cfg.BatchSize)
	for first := range c.in {
		if c.isAbandoned() {
			continue // drain: Stop has given up on these
		}
		batch = append(batch[:0], first)
	gather:
		for len(batch) < c.cfg.BatchSize {
			select {
			case p, ok := <-c.in:
				if !ok {
					break gather
				}
				batch = append(batch, p)
			default:
				break gather
			}
		}
		c.flush(batch)
	}
}

func (c *Completer) isAbandoned() bool { return c.abandon.Err() != nil }

// flush retries with backoff until the batch commits: leases keep the jobs
// safe meanwhile, and giving up would only make them run again. It gives up
// at once when Stop abandons the queue.
func (c *Completer) flush(batch []driver.CompleteParams) {
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(c.abandon, 30*time.Second)
		ids, err := c.exec.JobCompleteMany(ctx, batch)
		cancel()
		if c.isAbandoned() {
			return
		}
		if err == nil {
			if c.cfg.OnFlushed != nil {
				c.cfg.OnFlushed(batch, ids)
			}
			return
		}
		c.cfg.Logger.Error("flush completions", "jobs", len(batch), "attempt", attempt, "error", err)
		if attempt >= 20 {
			if c.cfg.OnFlushed != nil {
				c.cfg.OnFlushed(batch, nil)
			}
			return
		}
		select {
		case <-c.abandon.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}
