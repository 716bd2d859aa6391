package skiplock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/completer"
	"github.com/skiplock/skiplock/internal/dbwatch"
	"github.com/skiplock/skiplock/internal/maintenance"
)

// Client inserts, works and administers jobs on one database.
type Client struct {
	// driver is watched and has every optional store: one the driver
	// lacks answers ErrUnsupported (driver.As tells which it has).
	driver  *dbwatch.Driver
	config  Config
	log     *slog.Logger
	wake    *waker
	running *runningSet
	// policies are the lease, timeout and backoff of each worker's kind,
	// settled once: worker options, then contract, then config.
	policies map[string]kindPolicy
	// leases are the kinds' own leases for claims and heartbeats from
	// outside, worked out for the contract set in force (kindLeases).
	leases atomic.Pointer[setLeases]
	// contracts is the contract set enforced: stored, else Config.Contracts.
	contracts contractState
	// claimPlaces are where Claim's claims (HTTP workers) ended.
	claimPlaces claimPlaces
	// gathered joins one worker's claims in flight at once.
	gathered externalGather
	// pollers are the long-polling claims of external workers; listener
	// is the one wake-up listener, for them and for the producers.
	pollers  pollers
	listener listener
	health   writeHealth
	// workMW is Config.WorkMiddleware folded into one call; nil when none.
	workMW func(ctx context.Context, job *JobRow, call func(context.Context) error) error
	events eventHub
	// history adds up the attempts that end here (history.go).
	history historyRecorder

	mu        sync.Mutex
	started   bool
	startedAt time.Time // the process row's start (processes.go)
	producers atomic.Pointer[map[string]*producer]
	// completer stores completions, in-process and external, and bounds
	// the retries of every outcome's write (writeOutcome) once Stop begins.
	completer *completer.Completer
	// stopFetch ends claiming; stopAll ends the services after the drain.
	stopFetch, stopAll              context.CancelFunc
	releaseListener                 func()
	producersWG, jobsWG, servicesWG sync.WaitGroup
}

// NewClient returns a client on drv. It does not start working until Start.
func NewClient(drv driver.Driver, config *Config) (*Client, error) {
	if drv == nil {
		return nil, errors.New("skiplock: driver must not be nil")
	}
	if config == nil {
		config = &Config{}
	}
	cfg := config.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// Every statement goes through the watch: refusals become ErrReadOnly
	// and ErrDiskFull, and WriteHealth sees every write.
	tracker := dbwatch.NewTracker()
	c := &Client{driver: dbwatch.Wrap(drv, tracker), config: cfg, log: cfg.Logger.With("client_id", cfg.ID),
		health: writeHealth{tracker: tracker}}
	c.contracts.set.Store(cfg.Contracts)
	c.settlePolicies()
	c.workMW = workChain(cfg.WorkMiddleware)
	c.running = newRunningSet(c)
	c.history.init(c.driver)
	c.wake = newWaker(drv, c.wakeLocal)
	c.listener.c = c
	c.completer = completer.New(c.driver, completer.Config{BatchSize: cfg.CompleterBatchSize,
		OnFlushed: c.flushed, Logger: c.log})
	return c, nil
}

// Driver is the driver the client runs on, watched: its errors wrap
// ErrReadOnly and ErrDiskFull for refused writes, and WriteHealth sees
// the writes made through it.
func (c *Client) Driver() driver.Driver { return c.driver }

// ID is the client's worker id.
func (c *Client) ID() string { return c.config.ID }

// Start begins working the configured queues and running the maintenance
// services (rescuer, scheduler, … under leader election); it rescues expired
// leases once before the first claim. A client without queues runs only the
// maintenance, as a server for external workers does. A database that
// refuses writes (ErrReadOnly, ErrDiskFull) does not stop the start: the
// rescuer tries again. When Start returns the client listens for wake-ups
// (LISTEN on PostgreSQL), so that a job inserted after it starts without
// waiting for a poll; a listener that cannot listen yet does not fail
// Start: it is logged, and the client polls (FetchPollInterval) until the
// listener, trying again, is in place. The client works until Stop; ctx
// only bounds the start-up.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("skiplock: client already started")
	}
	if err := c.LoadContracts(ctx); err != nil {
		return fmt.Errorf("skiplock: start: %w", err)
	}
	c.settlePolicies() // by the contracts in force: leases, timeouts, backoffs
	if err := c.heartbeatWithinLeases(); err != nil {
		return fmt.Errorf("skiplock: start: %w", err)
	}
	if err := c.startRescue(ctx); err != nil {
		return err
	}
	c.startedAt = time.Now()
	fetchCtx, stopFetch := context.WithCancel(context.Background())
	allCtx, stopAll := context.WithCancel(context.Background())
	c.stopFetch, c.stopAll = stopFetch, stopAll
	c.completer.Start()
	producers := map[string]*producer{}
	for name, qc := range c.config.Queues {
		p := newProducer(c, name, qc)
		producers[name] = p
		c.producersWG.Go(func() { p.run(fetchCtx) })
	}
	c.producers.Store(&producers)
	// After the producers: the listener's first wake-up reaches them all.
	release, listening := c.listener.hold()
	c.releaseListener = release
	c.servicesWG.Go(func() { c.running.heartbeatLoop(allCtx) })
	if len(producers) > 0 {
		// Cancel and pause requests from other processes: SQLite's
		// notifications stay in their process, and on PostgreSQL a
		// notification that comes while its job is claimed but not yet
		// running here, or while the listener reconnects, names a job this
		// client does not hold yet; looking every second bounds both.
		c.servicesWG.Go(func() { c.running.pollStops(allCtx) })
	}
	c.servicesWG.Go(func() { c.elector().Run(allCtx) })
	c.servicesWG.Go(func() { c.historyLoop(allCtx) })
	if len(c.config.Fairness) > 0 {
		c.servicesWG.Go(func() { c.ensureFairIndex(allCtx) })
	}
	c.started = true
	c.awaitListener(ctx, listening)
	c.log.Info("client started", "driver", c.driver.Name(), "queues", len(producers))
	return nil
}

// Stop stops claiming, lets running jobs finish until ctx ends, then
// cancels the rest and hands them back (pending, no attempt spent), flushes
// completions, stops the services and sends the wake-ups of inserted jobs
// still on their way. Safe to call twice. On a client that was never
// started (one that only inserts) it sends those wake-ups, waiting for them
// until ctx ends: call it before the process exits.
func (c *Client) Stop(ctx context.Context) error { return c.stop(ctx, false) }

// StopAndCancel is Stop that cancels running jobs at once.
func (c *Client) StopAndCancel(ctx context.Context) error { return c.stop(ctx, true) }

// stop's order matters: claims end first so no new job starts; jobs drain
// (or are cancelled); completions flush while leases still hold; only then
// do heartbeats, the listener and leadership end; wake-ups go out last.
func (c *Client) stop(ctx context.Context, cancelJobs bool) error {
	c.mu.Lock()
	if !c.started {
		c.mu.Unlock()
		c.flushHistory(ctx) // the attempts HTTP workers reported through it
		if err := c.wake.flush(ctx); err != nil {
			return fmt.Errorf("skiplock: stop: %w", err)
		}
		return nil
	}
	c.started = false
	c.mu.Unlock()

	c.stopFetch()
	c.producersWG.Wait() // no job starts after this
	if cancelJobs {
		c.running.cancelAll(ErrStopping)
	}
	// Outcomes retried while the database is down hold their jobs (and so
	// the drain) and the completions: from now on, within StopBound or ctx.
	c.completer.Stopping(ctx)
	err := c.drain(ctx)
	// Unflushed jobs, when ctx ends first, run again after their leases.
	if ferr := c.completer.Stop(ctx); ferr != nil && err == nil {
		err = fmt.Errorf("skiplock: stop: flush completions: %w", ferr)
	}
	flushCtx, cancel := context.WithTimeout(ctx, completer.StopBound)
	defer cancel()
	c.stopAll()
	c.servicesWG.Wait()
	c.flushHistory(flushCtx)  // after the completions and the flush loop
	c.forgetProcess(flushCtx) // after the elector, whose tick beats it
	c.releaseListener()
	// Last: completions and the services insert jobs too (next stages,
	// periodic jobs), whose wake-ups must leave before the process does.
	if werr := c.wake.flush(flushCtx); werr != nil && err == nil {
		err = fmt.Errorf("skiplock: stop: %w", werr)
	}
	c.log.Info("client stopped")
	return err
}

// drain waits for the running jobs until ctx ends, then cancels them and
// gives them a few seconds to hand their jobs back.
func (c *Client) drain(ctx context.Context) error {
	drained := make(chan struct{})
	go func() { c.jobsWG.Wait(); close(drained) }()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		c.running.cancelAll(ErrStopping)
		select {
		case <-drained:
		case <-time.After(5 * time.Second):
		}
		return fmt.Errorf("skiplock: stop: jobs still running at deadline, cancelled: %w", ctx.Err())
	}
}

// startRescue rescues the jobs whose leases expired while no client ran.
// A database busy past its timeout (another process's long write on
// SQLite) passes on a second or third try. A refusal (a standby not yet
// promoted, a full disk) passes: the leader's rescuer runs again every
// RescueInterval. Anything else (no schema, no permission) will not mend.
func (c *Client) startRescue(ctx context.Context) error {
	refused := func(err error) bool { return errors.Is(err, ErrReadOnly) || errors.Is(err, ErrDiskFull) }
	r := c.rescuer()
	err := r.RunOnce(ctx)
	for try := 1; try < 3 && err != nil && ctx.Err() == nil && !refused(err); try++ {
		err = r.RunOnce(ctx)
	}
	switch {
	case err == nil:
		return nil
	case refused(err):
		c.log.Warn("start: rescue expired leases refused; the rescuer retries", "error", err)
		return nil
	}
	return fmt.Errorf("skiplock: start: rescue expired leases: %w", err)
}

func (c *Client) rescuer() *maintenance.Rescuer {
	var counters driver.MetricsStore
	if driver.Supports[driver.MetricsStore](c.driver) {
		counters = c.driver
	}
	return &maintenance.Rescuer{Store: c.driver, Counters: counters, Interval: c.config.RescueInterval, Logger: c.log,
		OnRescue: func(n int) {
			if c.events.on() {
				c.events.emit(Event{Kind: EventJobsRescued, Count: n})
			}
		},
		OnRequeue: func() {
			for name := range c.config.Queues {
				c.wakeLocal(name)
			}
		}}
}

// elector runs the leader-only services while this client leads.
func (c *Client) elector() *maintenance.Elector {
	var stopLeading context.CancelFunc
	var leading sync.WaitGroup
	return &maintenance.Elector{Store: c.driver, Name: "maintenance", ID: c.config.ID, TTL: c.config.LeaderTTL,
		Logger: c.log, OnTick: c.beatProcess, OnChange: func(leader bool) {
			if !leader {
				if stopLeading != nil {
					stopLeading()
					leading.Wait()
				}
				return
			}
			var ctx context.Context
			ctx, stopLeading = context.WithCancel(context.Background())
			leading.Go(func() { c.rescuer().Run(ctx) })
			leading.Go(func() {
				(&maintenance.Scheduler{Store: c.driver, Interval: c.config.SchedulerInterval, Logger: c.log}).Run(ctx)
			})
			if driver.Supports[driver.ArchiveStore](c.driver) {
				leading.Go(func() { (&maintenance.Partitioner{Store: c.driver, Logger: c.log}).Run(ctx) })
				leading.Go(func() { (&maintenance.KeyPruner{Store: c.driver, Logger: c.log}).Run(ctx) })
				leading.Go(func() { (&maintenance.QueueRecorder{Store: c.driver, Logger: c.log}).Run(ctx) })
			}
			if driver.Supports[driver.HotTableStore](c.driver) {
				leading.Go(func() { (&maintenance.Vacuumer{Store: c.driver, Logger: c.log}).Run(ctx) })
			}
			if flow, err := driver.As[driver.FlowStore](c.driver); err == nil {
				leading.Go(func() { (&maintenance.FlowSweeper{Store: flow, Logger: c.log}).Run(ctx) })
			}
			if driver.Supports[driver.ScheduleStore](c.driver) {
				leading.Go(func() { c.scheduleEnqueuer().Run(ctx) })
			}
			if st, err := driver.As[driver.HistoryStore](c.driver); err == nil {
				leading.Go(func() { (&maintenance.HistorySampler{Store: st, Logger: c.log}).Run(ctx) })
			}
			if !c.config.Retention.Disabled && driver.Supports[driver.RetentionStore](c.driver) {
				leading.Go(func() { c.janitor().Run(ctx) })
			}
			if len(c.config.PeriodicJobs) > 0 {
				leading.Go(func() { c.periodicEnqueuer().Run(ctx) })
			}
		}}
}

// flushed is told by the completer which jobs are done.
func (c *Client) flushed(batch []driver.CompleteParams, completed []driver.CompletedJob) {
	done := make(map[int64]bool, len(completed))
	for _, j := range completed {
		done[j.ID] = true
	}
	for _, p := range batch {
		if !done[p.ID] {
			if r := c.running.get(p.ID, p.Attempt); r != nil {
				c.log.Warn("completion refused: lease lost", jobAttr(r.row))
			} else {
				c.log.Warn("completion refused: lease lost", "job_id", p.ID, "attempt", p.Attempt)
			}
		} else if r := c.running.get(p.ID, p.Attempt); r != nil {
			c.history.recordRun(r.row, completedOutcome(r))
			c.emitCompleted(r, "")
		}
		c.running.remove(p.ID, p.Attempt)
	}
}

func (c *Client) wakeLocal(queue string) {
	c.pollers.wake(queue)
	ps := c.producers.Load()
	switch {
	case ps == nil:
	case queue == "": // every queue (the listener has just started listening)
		for _, p := range *ps {
			p.wakeUp()
		}
	case (*ps)[queue] != nil:
		(*ps)[queue].wakeUp()
	}
}

// stopNotified is told that a job was asked to stop (cancel or pause); if
// it runs here, the request says which.
func (c *Client) stopNotified(id int64) {
	if !c.running.holds(id) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	if err := c.running.stopRequests(ctx, []int64{id}); err != nil {
		c.log.Warn("look up a stop request; the next heartbeat sees it", "job_id", id, "error", err)
	}
}
