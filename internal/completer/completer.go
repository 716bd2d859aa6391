// Package completer flushes job completions in batches: a job counts as
// done only when the batch holding it commits.
package completer

import (
	"context"
	"errors"
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

// flush writes a batch with Retry, and tells OnFlushed which jobs it
// completed: none when it gave up. A batch Stop abandoned is not told.
func (c *Completer) flush(batch []driver.CompleteParams) {
	var ids []int64
	err := c.Retry(context.Background(), func(ctx context.Context) (err error) {
		ids, err = c.exec.JobCompleteMany(ctx, batch)
		return err
	}, func(try int, err error) {
		c.cfg.Logger.Error("flush completions", "jobs", len(batch), "attempt", try, "error", err)
	})
	if errors.Is(err, ErrAbandoned) || c.cfg.OnFlushed == nil {
		return
	}
	if err != nil {
		ids = nil
	}
	c.cfg.OnFlushed(batch, ids)
}

// Tries is how many times Retry tries a write before it gives up.
const Tries = 20

// ErrAbandoned answers a write that Stop gave up on.
var ErrAbandoned = errors.New("completer stopped before the write was stored")

// Retry runs write, each try bounded by 30 s, until it succeeds, with
// backoff (50 ms doubling to 5 s), at most Tries times: the leases of the
// jobs it reports on keep them safe meanwhile, and giving up would only
// leave them to run again once their leases end. failed hears each try
// that failed; the end of ctx ends the tries (not one under way). An
// answer of the fence (the job is no longer held, or gone) is final and
// answered at once. Once Stop abandons the queue it answers ErrAbandoned,
// even for a try that succeeded meanwhile.
func (c *Completer) Retry(ctx context.Context, write func(ctx context.Context) error, failed func(try int, err error)) error {
	wait := 50 * time.Millisecond
	for try := 1; ; try++ {
		tryCtx, cancel := context.WithTimeout(c.abandon, 30*time.Second)
		err := write(tryCtx)
		cancel()
		switch {
		case c.isAbandoned():
			return ErrAbandoned
		case err == nil || isFenced(err):
			return err
		}
		failed(try, err)
		if try >= Tries || ctx.Err() != nil {
			return err
		}
		select {
		case <-c.abandon.Done():
			return ErrAbandoned
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// isFenced tells the fence's answer, which no retry changes.
func isFenced(err error) bool {
	return errors.Is(err, driver.ErrLeaseLost) || errors.Is(err, driver.ErrNotFound) || errors.Is(err, driver.ErrWrongState)
}
