package completer

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// completeStore records each JobCompleteMany's ids and completes them
// all, except lost; while hold is set, the first statement waits on it.
// The embedded nil JobStore panics on anything else.
type completeStore struct {
	driver.JobStore
	mu    sync.Mutex
	calls [][]int64
	lost  int64
	hold  chan struct{}
	fail  error
}

func (s *completeStore) JobCompleteMany(ctx context.Context, ps []driver.CompleteParams) ([]driver.CompletedJob, error) {
	s.mu.Lock()
	hold := s.hold
	s.hold = nil
	var ids []int64
	var done []driver.CompletedJob
	for _, p := range ps {
		ids = append(ids, p.ID)
		if p.ID != s.lost {
			done = append(done, driver.CompletedJob{ID: p.ID, State: driver.StateCompleted})
		}
	}
	s.calls = append(s.calls, ids)
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.fail != nil {
		return nil, s.fail
	}
	return done, nil
}

func held(id int64) driver.CompleteParams {
	return driver.CompleteParams{HeldJob: driver.HeldJob{ID: id, Attempt: 1, WorkerID: "w"}}
}

// flushes records what OnFlushed hears.
type flushes struct {
	mu        sync.Mutex
	completed []int64
	jobs      int
}

func (f *flushes) on(batch []driver.CompleteParams, completed []driver.CompletedJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs += len(batch)
	for _, j := range completed {
		f.completed = append(f.completed, j.ID)
	}
}

// An idle completer stores a completion at once; those added while its
// statement runs share the next one; OnFlushed hears the ids that
// completed, not the one whose lease was lost.
func TestAddGathersWhileAStatementRuns(t *testing.T) {
	hold := make(chan struct{})
	s := &completeStore{hold: hold, lost: 4}
	var f flushes
	c := New(s, Config{OnFlushed: f.on})
	c.Start()
	if !c.Add(held(1)) {
		t.Fatal("Add refused on a started completer")
	}
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.calls) == 1 })
	for id := int64(2); id <= 5; id++ {
		c.Add(held(id))
	}
	waitFor(t, func() bool { n, _ := c.Waiting(""); return n == 4 })
	close(hold)
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := [][]int64{{1}, {2, 3, 4, 5}}; !slices.EqualFunc(s.calls, want, slices.Equal) {
		t.Fatalf("statements %v, want %v", s.calls, want)
	}
	slices.Sort(f.completed)
	if !slices.Equal(f.completed, []int64{1, 2, 3, 5}) || f.jobs != 5 {
		t.Fatalf("OnFlushed heard %d jobs, completed %v", f.jobs, f.completed)
	}
	if c.Add(held(6)) {
		t.Fatal("Add accepted after Stop")
	}
}

// Retry tries a failing write once before Start, and once Stopping's
// context has ended; Stop whose context ends abandons what it waits for.
func TestRetryAndStopAreBounded(t *testing.T) {
	boom := errors.New("connection refused")
	c := New(&completeStore{fail: boom}, Config{})
	tries := 0
	write := func(context.Context) error { tries++; return boom }
	if err := c.Retry(write, func(int, error) {}); !errors.Is(err, boom) || tries != 1 {
		t.Fatalf("before Start: %v after %d tries, want one", err, tries)
	}

	s := &completeStore{hold: make(chan struct{})}
	var f flushes
	c = New(s, Config{OnFlushed: f.on})
	c.Start()
	c.Add(held(1))
	ctx, cancel := context.WithCancel(context.Background())
	c.Stopping(ctx)
	cancel()
	tries = 0
	if err := c.Retry(write, func(int, error) {}); !errors.Is(err, boom) || tries != 1 {
		t.Fatalf("stopping: %v after %d tries, want one", err, tries)
	}
	if err := c.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stop with its context ended: %v", err)
	}
	if f.jobs != 0 {
		t.Fatalf("OnFlushed heard %d abandoned jobs", f.jobs)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
	}
}
