package skiplock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestJobInsertedAfterStartDoesNotWaitForThePoll: once Start has returned,
// a job inserted by another client (its own pool, so not started in
// process) wakes the worker through LISTEN/NOTIFY; the worker's poll is 10
// minutes away.
func TestJobInsertedAfterStartDoesNotWaitForThePoll(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ran := make(chan int64, 1)
	ws := skiplock.NewWorkers()
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[sleepArgs](func(_ context.Context, j *skiplock.Job[sleepArgs]) error {
		ran <- j.ID
		return nil
	}))
	worker, err := skiplock.NewClient(drv, &skiplock.Config{Workers: ws,
		Queues: map[string]skiplock.QueueConfig{"default": {}}, FetchPollInterval: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = worker.Stop(context.Background()) })
	producer, err := skiplock.NewClient(pgtest.Open(t, url), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := producer.Insert(t.Context(), sleepArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ran:
		if id != res.Job.ID {
			t.Fatalf("ran job %d, want %d", id, res.Job.ID)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the job inserted after Start waited for the poll")
	}
}

// listenNotifier is a notifier whose Listen first runs before, which may
// delay it or fail it; subscribed tells whether it has listened.
type listenNotifier struct {
	driver.Notifier
	before     func(ctx context.Context) error
	subscribed atomic.Bool
}

func (n *listenNotifier) Listen(ctx context.Context, onInsert func(string), onCancel func(int64)) error {
	if err := n.before(ctx); err != nil {
		return err
	}
	return n.Notifier.Listen(ctx, func(q string) {
		n.subscribed.Store(true)
		onInsert(q)
	}, onCancel)
}

// listenDriver is SQLite with a notifier of the test's.
type listenDriver struct {
	*sqlitedriver.Driver
	n *listenNotifier
}

func (d *listenDriver) Notifier() driver.Notifier { return d.n }

func startWithNotifier(t *testing.T, ctx context.Context, before func(ctx context.Context) error) (*listenNotifier, error) {
	t.Helper()
	sq := sqlitetest.New(t)
	n := &listenNotifier{Notifier: sq.Notifier(), before: before}
	ws := skiplock.NewWorkers()
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[sleepArgs](func(context.Context, *skiplock.Job[sleepArgs]) error { return nil }))
	c, err := skiplock.NewClient(&listenDriver{Driver: sq, n: n}, &skiplock.Config{Workers: ws,
		Queues: map[string]skiplock.QueueConfig{"default": {}}, FetchPollInterval: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Start(ctx)
	if err == nil {
		t.Cleanup(func() { _ = c.Stop(context.Background()) })
	}
	return n, err
}

// TestStartReturnsListening: Start returns once the listener listens, even
// when subscribing takes a while.
func TestStartReturnsListening(t *testing.T) {
	t.Parallel()
	n, err := startWithNotifier(t, t.Context(), func(ctx context.Context) error {
		select {
		case <-time.After(300 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !n.subscribed.Load() {
		t.Fatal("Start returned before the listener listened")
	}
}

// TestStartDoesNotFailOnTheListener: a listener that cannot listen, or
// has not listened when Start's context ends, does not fail Start; the
// client polls meanwhile.
func TestStartDoesNotFailOnTheListener(t *testing.T) {
	t.Parallel()
	t.Run("listen fails", func(t *testing.T) {
		t.Parallel()
		if _, err := startWithNotifier(t, t.Context(), func(context.Context) error { return errors.New("no listen today") }); err != nil {
			t.Fatalf("start: %v", err)
		}
	})
	t.Run("context ends first", func(t *testing.T) {
		t.Parallel()
		hold := make(chan struct{})
		ctx, cancel := context.WithCancel(t.Context())
		n, err := startWithNotifier(t, ctx, func(ctx context.Context) error {
			cancel() // Start's context ends while the listener subscribes
			select {
			case <-hold:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		listened := n.subscribed.Load()
		close(hold)
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		if listened {
			t.Fatal("the listener listened before Start returned")
		}
	})
}
