package skiplock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/skiplock/skiplock/contract"
)

// Defaults of a job and of a Config.
const (
	DefaultQueue              = "default"
	DefaultPriority           = 5
	DefaultMaxRetries         = 3
	DefaultMaxWorkers         = 1000
	DefaultLease              = 5 * time.Minute
	DefaultFetchPollInterval  = time.Second
	DefaultFetchCooldown      = 100 * time.Microsecond
	DefaultRescueInterval     = 2 * time.Second
	DefaultSchedulerInterval  = 500 * time.Millisecond
	DefaultLeaderTTL          = 15 * time.Second
	DefaultCompleterBatchSize = 1000
)

// QueueConfig is how a client works one queue.
type QueueConfig struct {
	// MaxWorkers is how many jobs of the queue run at once in this client
	// (default 1000: a job runs on a goroutine, and most jobs wait on I/O).
	// Set it lower for jobs that hold something scarce, such as database
	// connections or CPU.
	MaxWorkers int
}

// Config configures a Client. A client without Queues only inserts and
// administers; with Queues it also works jobs and runs maintenance.
// A zero duration or size of Config's own takes its default (the Default…
// constants); a negative one is refused (Retention has KeepForever).
type Config struct {
	// ID names this process in leases and leadership; default host-pid-rand.
	ID      string
	Queues  map[string]QueueConfig
	Workers *Workers
	Logger  *slog.Logger

	// Fairness shares the claims of these queues between their tenants
	// (see Fairness), by queue name: the claims of this client's producers
	// and of Claim (the HTTP workers). A queue not named is claimed in
	// priority order whatever the tenant.
	Fairness map[string]Fairness

	// Lease is the default lease of a claimed job; kinds may override it.
	Lease time.Duration
	// HeartbeatInterval extends leases; default a third of the shortest lease.
	// It must be shorter than every lease (Lease, WorkerOpts.Lease, the
	// contracts'): a lease would otherwise run out between two beats.
	HeartbeatInterval time.Duration
	// FetchPollInterval is the fallback claim interval when no wake-up comes.
	FetchPollInterval time.Duration
	// FetchCooldown is the least time between two claims of one queue;
	// ten times that after two claims in a row that found nothing.
	FetchCooldown     time.Duration
	RescueInterval    time.Duration
	SchedulerInterval time.Duration
	LeaderTTL         time.Duration
	// JobTimeout is the default timeout of a job (0: none).
	JobTimeout time.Duration
	// Backoff is the default wait before retry `retry` (DefaultBackoff).
	Backoff func(retry int) time.Duration
	// CompleterBatchSize is the most completions flushed in one statement.
	CompleterBatchSize int
	// PeriodicJobs are enqueued on cron schedules by the leader, once per
	// tick across all servers (see PeriodicJob).
	PeriodicJobs []PeriodicJob
	// Contracts validates and defaults every job that enters through this
	// client (contract.Load); nil means no contracts.
	Contracts *contract.Set
	// ContractsWin says which set wins when Contracts differs from the set
	// stored in the database (ContractsApply, `skiplock contracts apply`);
	// by default the client refuses to start (ErrContractsDiffer).
	ContractsWin ContractsWin
	// Flow are rate limits and concurrency keys (FlowRule), enforced
	// across every process on the database; docs/flow-control.md.
	Flow []FlowRule
	// FlowPollInterval is how often a queue under flow limits is claimed
	// from when nothing wakes it (DefaultFlowPollInterval).
	FlowPollInterval time.Duration
	// Vault, when set, receives finished jobs before retention deletes
	// them (see Vault); nil deletes without keeping a copy.
	Vault Vault
	// Retention is how long finished jobs are kept (see Retention); the
	// leader applies it every Retention.Interval.
	Retention Retention

	// WorkMiddleware wraps every attempt this client works, outermost
	// first (see WorkMiddleware); none costs nothing.
	WorkMiddleware []WorkMiddleware
	// InsertMiddleware wraps every insert made through this client,
	// outermost first (see InsertMiddleware).
	InsertMiddleware []InsertMiddleware
	// ErrorHandler, when set, is called after every attempt of this client
	// that failed: the worker's error, a timeout, a panic (a *PanicError
	// with its stack). Not for snoozes, cancellations, lost leases or jobs
	// handed back at shutdown. It runs on the job's goroutine; a panic in
	// it is logged and dropped.
	ErrorHandler func(ctx context.Context, job *JobRow, err error)
}

func (c Config) withDefaults() Config {
	if c.ID == "" {
		c.ID = defaultClientID()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Workers == nil {
		c.Workers = NewWorkers()
	}
	c.Lease = orDuration(c.Lease, DefaultLease)
	c.FetchPollInterval = orDuration(c.FetchPollInterval, DefaultFetchPollInterval)
	c.FetchCooldown = orDuration(c.FetchCooldown, DefaultFetchCooldown)
	c.RescueInterval = orDuration(c.RescueInterval, DefaultRescueInterval)
	c.SchedulerInterval = orDuration(c.SchedulerInterval, DefaultSchedulerInterval)
	c.LeaderTTL = orDuration(c.LeaderTTL, DefaultLeaderTTL)
	c.FlowPollInterval = orDuration(c.FlowPollInterval, DefaultFlowPollInterval)
	if c.Backoff == nil {
		c.Backoff = DefaultBackoff
	}
	if c.CompleterBatchSize == 0 {
		c.CompleterBatchSize = DefaultCompleterBatchSize
	}
	queues := make(map[string]QueueConfig, len(c.Queues))
	for name, q := range c.Queues {
		if q.MaxWorkers == 0 {
			q.MaxWorkers = DefaultMaxWorkers
		}
		queues[name] = q
	}
	c.Queues = queues
	c.Retention = c.Retention.withDefaults()
	return c
}

func (c Config) validate() error {
	for name, q := range c.Queues {
		if name == "" {
			return fmt.Errorf("config: Queues: queue name must not be empty")
		}
		if q.MaxWorkers < 1 || q.MaxWorkers > 10000 {
			return fmt.Errorf("config: Queues[%q].MaxWorkers: must be between 1 and 10000 (0 takes the default, %d), got %d",
				name, DefaultMaxWorkers, q.MaxWorkers)
		}
	}
	if len(c.Queues) > 0 && len(c.Workers.byKind) == 0 {
		return fmt.Errorf("config: Workers: a client that works queues needs at least one worker")
	}
	if c.Lease < time.Second {
		return fmt.Errorf("config: Lease: must be at least 1s, got %s", c.Lease)
	}
	if err := c.validateDurations(); err != nil {
		return err
	}
	if err := c.validateWorkers(); err != nil {
		return err
	}
	if len(c.ID) > 200 {
		return fmt.Errorf("config: ID: must be at most 200 characters")
	}
	switch c.ContractsWin {
	case ContractsRefuse, ContractsStoredWins, ContractsConfigWins:
	default:
		return fmt.Errorf("config: ContractsWin: %q is not one of \"\", \"stored\", \"config\"", c.ContractsWin)
	}
	if err := validateFlow(c.Flow); err != nil {
		return err
	}
	if err := validateFairness(c.Fairness); err != nil {
		return err
	}
	if err := c.Retention.validate(); err != nil {
		return err
	}
	for i, mw := range c.WorkMiddleware {
		if mw == nil {
			return fmt.Errorf("config: WorkMiddleware[%d]: must not be nil", i)
		}
	}
	for i, mw := range c.InsertMiddleware {
		if mw == nil {
			return fmt.Errorf("config: InsertMiddleware[%d]: must not be nil", i)
		}
	}
	return validatePeriodic(c.PeriodicJobs)
}

// validateDurations refuses the negative durations and sizes, which
// withDefaults leaves as they are.
func (c Config) validateDurations() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"HeartbeatInterval", c.HeartbeatInterval}, {"FetchPollInterval", c.FetchPollInterval},
		{"FetchCooldown", c.FetchCooldown}, {"RescueInterval", c.RescueInterval},
		{"SchedulerInterval", c.SchedulerInterval}, {"LeaderTTL", c.LeaderTTL},
		{"FlowPollInterval", c.FlowPollInterval}, {"JobTimeout", c.JobTimeout},
	} {
		if f.d < 0 {
			return fmt.Errorf("config: %s: must not be negative (0 takes the default), got %s", f.name, f.d)
		}
	}
	if c.CompleterBatchSize < 0 {
		return fmt.Errorf("config: CompleterBatchSize: must not be negative (0 takes the default, %d), got %d",
			DefaultCompleterBatchSize, c.CompleterBatchSize)
	}
	return c.heartbeatWithin("Lease", c.Lease)
}

// validateWorkers refuses worker options that cannot work: a negative
// timeout, a lease too short to heartbeat.
func (c Config) validateWorkers() error {
	for _, kind := range slices.Sorted(maps.Keys(c.Workers.byKind)) {
		opts := c.Workers.byKind[kind].opts
		field := fmt.Sprintf("config: Workers[%q]", kind)
		if opts.Lease != 0 && opts.Lease < time.Second {
			return fmt.Errorf("%s: WorkerOpts.Lease: must be at least 1s (0 takes the contract's or Config.Lease), got %s", field, opts.Lease)
		}
		if opts.Timeout < 0 {
			return fmt.Errorf("%s: WorkerOpts.Timeout: must not be negative (0: none), got %s", field, opts.Timeout)
		}
		if opts.Lease > 0 {
			if err := c.heartbeatWithin(fmt.Sprintf("the lease of kind %q (WorkerOpts.Lease)", kind), opts.Lease); err != nil {
				return err
			}
		}
	}
	return nil
}

// heartbeatWithin refuses a HeartbeatInterval that is not shorter than
// lease: every lease would run out between two beats.
func (c Config) heartbeatWithin(what string, lease time.Duration) error {
	if c.HeartbeatInterval > 0 && c.HeartbeatInterval >= lease {
		return fmt.Errorf("config: HeartbeatInterval: must be shorter than %s, %s, got %s", what, lease, c.HeartbeatInterval)
	}
	return nil
}

// orDuration answers def for zero, the convention of every duration in
// Config; a negative v stays, for validate to refuse.
func orDuration(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

func defaultClientID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}
