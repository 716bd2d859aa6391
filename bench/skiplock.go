package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
)

// Queue is the queue the bench works.
const Queue = "bench"

// noop is the bench job: its payload carries the enqueue time.
type noop struct {
	T int64 `json:"t,omitempty"`
	// K is the job's flow key under --flow-keys.
	K string `json:"k,omitempty"`
}

func (noop) Kind() string { return "bench_noop" }

// Skiplock is Skiplock as a System, working Queue with config's settings.
type Skiplock struct {
	client *skiplock.Client
	driver driver.Driver
	config skiplock.Config
	onWork atomic.Pointer[func(int64)]
	// flowKeys spreads the jobs inserted over that many flow keys; inserted
	// counts them.
	flowKeys int
	// claimed inserts every job pending (Options.Claimed): InsertMany
	// starts none at its insert.
	claimed  bool
	inserted atomic.Int64
}

// NewSkiplock returns Skiplock on drv. config's Queues and Workers are set
// by the bench; a zero MaxWorkers takes the default.
func NewSkiplock(drv driver.Driver, config skiplock.Config, maxWorkers int) (*Skiplock, error) {
	s := &Skiplock{driver: drv}
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[noop](func(_ context.Context, j *skiplock.Job[noop]) error {
		if f := s.onWork.Load(); f != nil {
			(*f)(j.Args.T)
		}
		return nil
	}))
	config.Workers = workers
	config.Queues = map[string]skiplock.QueueConfig{Queue: {MaxWorkers: maxWorkers}}
	s.config = config
	c, err := skiplock.NewClient(drv, &config)
	if err != nil {
		return nil, err
	}
	s.client = c
	return s, nil
}

// Client is the client under test, for set-up inserts.
func (s *Skiplock) Client() *skiplock.Client { return s.client }

func (s *Skiplock) Name() string { return "skiplock" }

func (s *Skiplock) Insert(ctx context.Context, n int, stamp time.Time) error {
	args := noop{}
	if !stamp.IsZero() {
		args.T = stamp.UnixNano()
	}
	opts := &skiplock.InsertOpts{Queue: Queue}
	if n == 1 && !s.claimed {
		if s.flowKeys > 0 {
			args.K = flowKey(int(s.inserted.Add(1)), s.flowKeys)
		}
		_, err := s.client.Insert(ctx, args, opts)
		return err
	}
	jobs := make([]skiplock.InsertManyParams, n)
	first := int(s.inserted.Add(int64(n))) - n
	for i := range jobs {
		if s.flowKeys > 0 {
			args.K = flowKey(first+i, s.flowKeys)
		}
		jobs[i] = skiplock.InsertManyParams{Args: args, Opts: opts}
	}
	_, err := s.client.InsertMany(ctx, jobs)
	return err
}

// Start starts a fresh client (a client starts once).
func (s *Skiplock) Start(ctx context.Context, onWork func(int64)) error {
	s.onWork.Store(&onWork)
	return s.client.Start(ctx)
}

// Stop stops the client and readies a new one for the next Start.
func (s *Skiplock) Stop(ctx context.Context) error {
	err := s.client.Stop(ctx)
	c, nerr := skiplock.NewClient(s.driver, &s.config)
	if nerr == nil {
		s.client = c
	}
	if err != nil {
		return err
	}
	return nerr
}

func (s *Skiplock) Live(ctx context.Context) (int64, error) {
	stats, err := driver.As[driver.StatsStore](s.driver)
	if err != nil {
		return 0, err
	}
	qs, err := stats.QueueList(ctx, false)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, q := range qs {
		if q.Name == Queue {
			for _, c := range q.Counts {
				n += c
			}
		}
	}
	return n, nil
}

// Park inserts n jobs that the bench never works: pending in another queue
// (a backlog), or due at `at` in the bench queue (scheduled).
func (s *Skiplock) Park(ctx context.Context, n int, queue string, at time.Time, batch int) error {
	for done := 0; done < n; done += batch {
		jobs := make([]skiplock.InsertManyParams, min(batch, n-done))
		for i := range jobs {
			jobs[i] = skiplock.InsertManyParams{Args: noop{}, Opts: &skiplock.InsertOpts{Queue: queue, RunAt: at}}
		}
		if _, err := s.client.InsertMany(ctx, jobs); err != nil {
			return err
		}
	}
	return nil
}
