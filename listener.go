package skiplock

import (
	"context"
	"sync"
	"time"
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
}

// hold starts the listener unless it runs; release lets it go.
func (l *listener) hold() (release func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holds++
	if l.holds == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		l.stop, l.done = cancel, done
		go func() {
			defer close(done)
			l.c.listen(ctx)
		}()
	}
	var once sync.Once
	return func() { once.Do(l.release) }
}

func (l *listener) release() {
	l.mu.Lock()
	l.holds--
	if l.holds > 0 {
		l.mu.Unlock()
		return
	}
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
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
func (c *Client) KeepListening() (release func()) { return c.listener.hold() }

// listen delivers wake-ups and cancel requests, reconnecting on failure.
func (c *Client) listen(ctx context.Context) {
	n := c.driver.Notifier()
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := n.Listen(ctx, c.wakeLocal, c.stopNotified)
		if ctx.Err() != nil {
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
