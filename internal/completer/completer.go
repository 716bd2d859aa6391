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
	return &Completer{exec: exec, cfg: cfg, in: make(chan driver.CompleteParams, cfg.BatchSize*4),
		done: make(chan struct{})}
}

// Start runs the flush loop until Stop.
func (c *Completer) Start() { go c.run() }

// Add queues a completion; it blocks when the completer is behind, which
// holds back the workers (backpressure). After Stop it answers false and the
// job runs again once its lease expires.
func (c *Completer) Add(p driver.CompleteParams) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return false
	}
	c.in <- p
	return true
}

// Stop flushes what is queued and returns when done or when ctx ends (the
// unflushed jobs then run again after their lease expires).
func (c *Completer) Stop(ctx context.Context) error {
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
		return ctx.Err()
	}
}

func (c *Completer) run() {
	defer close(c.done)
	batch := make([]driver.CompleteParams, 0, c.cfg.BatchSize)
	for first := range c.in {
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

// flush retries with backoff until the batch commits: leases keep the jobs
// safe meanwhile, and giving up would only make them run again.
func (c *Completer) flush(batch []driver.CompleteParams) {
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ids, err := c.exec.JobCompleteMany(ctx, batch)
		cancel()
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
		time.Sleep(wait)
		wait = min(wait*2, 5*time.Second)
	}
}
