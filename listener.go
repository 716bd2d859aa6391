package skiplock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// listener runs the client's one wake-up listener (Notifier.Listen) while
// anyone holds it: a started client until Stop, a server for external
// workers until it closes. The last release stops it and waits for it.
type listener struct {
	c *Client

	mu    sync.Mutex
	holds int
	stop  context.CancelFunc
	done  chan struct{}
	// ready is closed once the running listener listens, or its first
	// attempt has failed (the client polls until a retry listens).
	ready chan struct{}
}

// hold starts the listener unless it runs; release lets it go. ready is
// closed once the listener listens, or its first attempt failed.
func (l *listener) hold() (release func(), ready <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holds++
	if l.holds == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		done, ready := make(chan struct{}), make(chan struct{})
		l.stop, l.done, l.ready = cancel, done, ready
		go func() {
			defer close(done)
			l.c.listen(ctx, sync.OnceFunc(func() { close(ready) }))
		}()
	}
	var once sync.Once
	return func() { once.Do(l.release) }, l.ready
}

func (l *listener) release() {
	l.mu.Lock()
	l.holds--
	if l.holds > 0 {
		l.mu.Unlock()
		return
	}
	stop, done := l.stop, l.done
	l.stop, l.done, l.ready = nil, nil, nil
	l.mu.Unlock()
	stop()
	<-done
}

// KeepListening keeps the client's wake-up listener running until the
// returned function is called (calling it again does nothing), as a
// started client does until Stop: a long-polling Claim (ClaimParams.Wait)
// then wakes as soon as jobs arrive in its queue, from this process or
// another. Without it, on a client never started, a waiting Claim looks
// again every ClaimParams.Recheck.
func (c *Client) KeepListening() (release func()) {
	release, _ = c.listener.hold()
	return release
}

// listen delivers wake-ups and cancel requests, reconnecting on failure.
// It calls ready once it listens (the notifier's first wake-up of every
// queue says so), or once its first attempt has failed.
func (c *Client) listen(ctx context.Context, ready func()) {
	n := c.driver.Notifier()
	onInsert := func(queue string) {
		ready()
		c.wakeLocal(queue)
	}
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := n.Listen(ctx, onInsert, c.stopNotified)
		ready()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, driver.ErrNoListen) {
			c.log.Info("no LISTEN: workers poll for new jobs", "poll_interval", c.config.FetchPollInterval, "reason", err)
			return
		}
		// Wake-ups may have been missed while disconnected.
		c.wakeLocal("")
		c.log.Warn("listen for notifications", "error", err, "retry_in", wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// awaitListener waits until the wake-up listener listens, so that a job
// inserted once Start has returned wakes a worker at once rather than at
// its next poll. A listener that cannot listen (its first attempt failed,
// or ctx ended first) does not fail Start: it keeps trying, and the
// producers poll every FetchPollInterval until it listens.
func (c *Client) awaitListener(ctx context.Context, listening <-chan struct{}) {
	select {
	case <-listening:
	case <-ctx.Done():
		c.log.Warn("start: not listening for wake-ups yet; polling until the listener is in place", "error", ctx.Err())
	}
}
