// Package completer stores job completions by group commit, for workers in
// this process and outside it alike: the completions of one worker that
// arrive while its statement runs share the next one (Gather), so batches
// grow with load and stay single jobs when idle, with no timer. A job counts
// as done only when the statement holding it commits.
package completer

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Config tunes a Completer.
type Config struct {
	// BatchSize is the most completions in one statement.
	BatchSize int
	// OnFlushed gets the completions Add queued that a statement stored,
	// and the jobs that completed; the others had lost their lease.
	OnFlushed func(batch []driver.CompleteParams, completed []driver.CompletedJob)
	Logger    *slog.Logger
}

// Completer stores completions: Add's without waiting (a worker in this
// process moves on), Complete's waiting (an external worker's report).
type Completer struct {
	exec   driver.JobStore
	cfg    Config
	gather Gather[string, *report]
	fits   func(batch []*report, w *report) bool
	flushF func(batch []*report)
	// slots bound the completions Add queued and not yet stored: a full
	// set holds back the workers (backpressure).
	slots chan struct{}
	run   atomic.Pointer[runState]
}

// runState is one run of the completer, from Start to Stop.
type runState struct {
	// giveUp ends the retries of failed writes (each is still tried once);
	// abandon ends the writes themselves (their jobs run again after their
	// leases).
	giveUp, abandon       context.Context
	giveUpNow, abandonNow context.CancelFunc
	stopGiveUp            func()
	// stopping, closed as Stop begins, frees Adds blocked on a full set of
	// slots (a database that is down) so that Stop can close.
	stopping chan struct{}
	stopOnce sync.Once
	flushing sync.WaitGroup
	// mu guards closed: no Add joins flushing once Stop waits for it.
	mu     sync.RWMutex
	closed bool
}

// report is one call's completions and, once its statement ran, the jobs
// it finished (sorted by id) or its error.
type report struct {
	ctx    context.Context
	params []driver.CompleteParams
	one    [1]driver.CompleteParams
	st     *runState // an Add's run; nil for Complete
	names  Names     // the batch's, on its first report
	done   []driver.CompletedJob
	err    error
}

// New returns a completer writing through exec. Before Start it stores
// Complete's reports, and Retry tries a write once.
func New(exec driver.JobStore, cfg Config) *Completer {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 1000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Completer{exec: exec, cfg: cfg, slots: make(chan struct{}, cfg.BatchSize*4)}
	c.fits = func(batch []*report, w *report) bool {
		first := batch[0]
		if first.st == nil {
			return first.names.Fit(first.params, w.params, cfg.BatchSize)
		}
		// Add's name jobs held here, each once: only their number counts.
		if first.names.n == 0 {
			first.names.n = len(first.params)
		}
		if first.names.n+len(w.params) > cfg.BatchSize {
			return false
		}
		first.names.n += len(w.params)
		return true
	}
	c.flushF = c.flush
	st := newRunState()
	st.giveUpNow()
	st.closed = true
	c.run.Store(st)
	return c
}

func newRunState() *runState {
	st := &runState{stopping: make(chan struct{}), stopGiveUp: func() {}}
	st.giveUp, st.giveUpNow = context.WithCancel(context.Background())
	st.abandon, st.abandonNow = context.WithCancel(context.Background())
	return st
}

// Start begins a run: Add queues, and Retry tries again until Stop.
func (c *Completer) Start() { c.run.Store(newRunState()) }

// StopBound bounds how long, once Stopping is called, a write that the
// database refuses is tried again.
const StopBound = 30 * time.Second

// Add queues a completion of a job this process holds; it blocks while
// 4 × BatchSize wait, which holds back the workers. Before Start, or once
// Stop has begun, it answers false: the job runs again once its lease
// expires.
func (c *Completer) Add(p driver.CompleteParams) bool {
	st := c.run.Load()
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.closed {
		return false
	}
	select {
	case c.slots <- struct{}{}:
	case <-st.stopping:
		return false
	}
	st.flushing.Add(1)
	r := &report{st: st}
	r.one[0] = p
	r.params = r.one[:]
	c.gather.Go("", r, c.fits, c.flushF)
	return true
}

// Complete stores params, held jobs of one worker, in one statement with
// the same worker's completions that wait for it, and answers the ids
// that statement finished, sorted. A completion that names a job the
// gathered ones name waits for the next statement: of two reports of one
// job, one finishes it and the other is refused, as when they run apart.
// workerID is never empty: "" gathers Add's.
func (c *Completer) Complete(ctx context.Context, workerID string, params []driver.CompleteParams) ([]driver.CompletedJob, error) {
	r := &report{ctx: ctx, params: params}
	c.gather.Do(workerID, r, c.fits, c.flushF)
	return r.done, r.err
}

// reportTimeout bounds a statement of Complete's: it may carry other
// calls' jobs, so no one caller's context cuts it short.
const reportTimeout = 30 * time.Second

// flush stores a batch in one statement: Add's (key "") with Retry, and
// OnFlushed hears which completed (none when it gave up; not at all when
// Stop abandoned them); one external worker's once.
func (c *Completer) flush(batch []*report) {
	params := batch[0].params
	if len(batch) > 1 {
		params = make([]driver.CompleteParams, 0, batch[0].names.n)
		for _, r := range batch {
			params = append(params, r.params...)
		}
	}
	var done []driver.CompletedJob
	write := func(ctx context.Context) (err error) {
		done, err = c.exec.JobCompleteMany(ctx, params)
		return err
	}
	st := batch[0].st
	if st == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), reportTimeout)
		defer cancel()
		err := write(ctx)
		slices.SortFunc(done, func(a, b driver.CompletedJob) int { return cmp.Compare(a.ID, b.ID) })
		for _, r := range batch {
			r.done, r.err = done, err
		}
		return
	}
	err := retry(st, write, func(try int, err error) {
		c.cfg.Logger.Error("flush completions", "jobs", len(params), "attempt", try, "error", err)
	})
	if !errors.Is(err, ErrAbandoned) && c.cfg.OnFlushed != nil {
		if err != nil {
			done = nil
		}
		c.cfg.OnFlushed(params, done)
	}
	for range params {
		<-c.slots
	}
	st.flushing.Add(-len(batch))
}

// Stopping begins the stop: from now on a write that fails is tried again
// only until ctx ends or StopBound passes (each is still tried once), so
// that a database that is down does not hold the jobs still running, nor
// Stop, for long.
func (c *Completer) Stopping(ctx context.Context) {
	st := c.run.Load()
	bound, cancel := context.WithTimeout(ctx, StopBound)
	stop := context.AfterFunc(bound, st.giveUpNow)
	st.stopGiveUp = func() { stop(); cancel() }
}

// Stop ends Add and waits for the completions queued, until ctx ends:
// then it abandons them (their jobs run again after their leases) and
// answers ctx's error.
func (c *Completer) Stop(ctx context.Context) error {
	st := c.run.Load()
	st.stopOnce.Do(func() { close(st.stopping) }) // frees the blocked Adds, which hold mu
	st.mu.Lock()
	already := st.closed
	st.closed = true
	st.mu.Unlock()
	if already {
		return nil
	}
	defer func() { st.stopGiveUp(); st.giveUpNow() }() // what still runs after Stop tries once
	flushed := make(chan struct{})
	go func() { st.flushing.Wait(); close(flushed) }()
	select {
	case <-flushed:
		return nil
	case <-ctx.Done():
		st.abandonNow()
		<-flushed
		return ctx.Err()
	}
}

// Tries is how many times Retry tries a write before it gives up.
const Tries = 20

// ErrAbandoned answers a write that Stop gave up on.
var ErrAbandoned = errors.New("completer stopped before the write was stored")

// Retry runs write, each try bounded by 30 s, until it succeeds, with
// backoff (50 ms doubling to 5 s), at most Tries times: the leases of the
// jobs it reports on keep them safe meanwhile, and giving up would only
// leave them to run again once their leases end. failed hears each try
// that failed. Once Stopping, it tries again only within StopBound; before
// Start, it tries once. An answer of the fence (the job is no longer held,
// or gone) is final and answered at once. Once Stop abandons the writes
// it answers ErrAbandoned, even for a try that succeeded meanwhile.
func (c *Completer) Retry(write func(ctx context.Context) error, failed func(try int, err error)) error {
	return retry(c.run.Load(), write, failed)
}

func retry(st *runState, write func(ctx context.Context) error, failed func(try int, err error)) error {
	wait := 50 * time.Millisecond
	for try := 1; ; try++ {
		if st.abandon.Err() != nil {
			return ErrAbandoned
		}
		tryCtx, cancel := context.WithTimeout(st.abandon, 30*time.Second)
		err := write(tryCtx)
		cancel()
		switch {
		case st.abandon.Err() != nil:
			return ErrAbandoned
		case err == nil || isFenced(err):
			return err
		}
		failed(try, err)
		if try >= Tries || st.giveUp.Err() != nil {
			return err
		}
		select {
		case <-st.giveUp.Done():
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

// Names are the jobs the completions of one statement name. Its zero
// value is ready.
type Names struct {
	ids map[int64]bool
	n   int
}

// Fit answers whether completions w can join a statement whose first call
// stores first (the batch's calls are offered in turn, each once), and
// takes their names if so: at most max jobs, none named twice. A
// completion that names a job again waits for a statement of its own.
func (r *Names) Fit(first, w []driver.CompleteParams, max int) bool {
	if len(w) == 0 {
		return true // nothing to name
	}
	if r.ids == nil {
		r.ids = make(map[int64]bool, len(first)+len(w))
		for _, p := range first {
			r.ids[p.ID] = true
		}
		r.n = len(first)
	}
	if r.n+len(w) > max {
		return false
	}
	for _, p := range w {
		if r.ids[p.ID] {
			return false
		}
	}
	for _, p := range w {
		r.ids[p.ID] = true
	}
	r.n += len(w)
	return true
}

// Waiting answers how many calls of workerID ("": Add's) wait for a
// statement, and whether one runs.
func (c *Completer) Waiting(workerID string) (n int, running bool) { return c.gather.Waiting(workerID) }
