package bench

import (
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// Modes are the bench's modes.
var Modes = []string{"drain", "e2e", "latency", "latency-remote", "latency-http", "insert", "http", "steady", "flood", "commit"}

// Options configure one run of Skiplock; zero values take the defaults
// (for the client: Skiplock's own).
type Options struct {
	DatabaseURL string
	// ListenDatabaseURL is a direct URL for LISTEN (and the bench's
	// schema) beside a DatabaseURL through PgBouncer in transaction mode.
	ListenDatabaseURL string
	// Pools split each process's connections by role within a budget
	// (PostgreSQL). e2e on PostgreSQL reports claim_p99_ms (of the bench's
	// own claims) and sessions_max, the most sessions of the run's
	// processes pg_stat_activity counted.
	Pools pgdriver.Pools
	Mode  string
	// Jobs to drain or insert.
	Jobs int
	// Duration of e2e, the latency modes, http, steady and commit.
	Duration time.Duration
	// Rate of the latency modes' and steady's enqueues per second, and of
	// commit's inserts.
	Rate float64
	// SampleEvery is steady's sampling interval of the hot table's dead
	// tuples (default a second).
	SampleEvery time.Duration
	// VacuumEvery vacuums the hot table this often from a connection of
	// the bench's own during steady and e2e (PostgreSQL): to measure what a
	// maintenance task vacuuming it would do, without building one.
	VacuumEvery time.Duration
	// Workers is MaxWorkers of the bench queue.
	Workers int
	// Batch is jobs per InsertMany; Producers is goroutines inserting at
	// once (0: one, or one per CPU in insert mode).
	Batch, Producers  int
	FetchCooldown     time.Duration
	FetchPollInterval time.Duration
	CompleterBatch    int
	// Backlog parks pending jobs in another queue; Scheduled parks jobs due
	// in a day in the bench queue; HoldTx holds a snapshot open (e2e).
	Backlog, Scheduled int
	HoldTx             bool
	// HoldSnapshot holds a snapshot open in a transaction that reads none
	// of Skiplock's tables (e2e): a report on other tables, an idle
	// session, a replica's feedback. HoldTx's transaction has also read the
	// hot table, and keeps a lock on it.
	HoldSnapshot bool
	// AfterIdle drains a burst on a queue that sat idle (drain): the
	// workers start first and idle on the emptied, vacuumed table.
	AfterIdle bool
	// TableOptions are storage parameters set on the hot table before the
	// run (PostgreSQL), e.g. "autovacuum_vacuum_scale_factor=0": to try
	// vacuum settings without touching the migrations.
	TableOptions string
	// Exe is the skiplock binary that worker, producer and server
	// processes run (RunsProcesses).
	Exe string
	// Procs is how many worker processes work the queue: HTTP workers in
	// http mode (default 4), library clients in drain and e2e (0: the
	// bench's own process works it).
	Procs int
	// ClaimMax is jobs per claim of an HTTP worker (default 100); Loops is
	// claims in flight at once in each (default 4); H2C makes them speak
	// HTTP/2 without TLS; FullJobs makes claims answer whole job objects
	// instead of the fields a worker runs a job with (id, attempt, kind,
	// payload); SeparateReports makes them report each claim's jobs in a
	// call of their own instead of with their next claim.
	ClaimMax, Loops                int
	H2C, FullJobs, SeparateReports bool
	// Servers is how many `skiplock serve` processes the HTTP workers
	// share (http, default 1), each with Pools (in http mode the bench's
	// own process, which only inserts, keeps one pool): worker process i
	// works through server i mod Servers.
	Servers int
	// Purge seeds this many completed jobs, finished 10 days ago and
	// earlier, in the archive; latency then runs the janitor beside its
	// enqueues and adds its figures (latency).
	Purge int
	// Bulk seeds this many pending jobs in a queue no worker takes; latency
	// then pauses, resumes, cancels, retries, cancels and deletes them
	// with JobsBulk (BulkBatch jobs a batch, 0 for the default) beside its
	// enqueues and adds each action's seconds.
	Bulk, BulkBatch int
	// Claimed makes latency insert every job pending, for a worker to be
	// woken and claim it, instead of starting it at its insert: the jobs'
	// latency then includes a claim, and --purge and --bulk add the claims'
	// percentiles while they run and after.
	Claimed bool
	// FlowKeys spreads the bench jobs over that many concurrency keys,
	// each limited to FlowConcurrency running jobs (default
	// DefaultFlowConcurrency) and, with FlowRate, to FlowRate starts a
	// second: the cost of flow control (flow.go).
	FlowKeys, FlowConcurrency, FlowRate int
	// Fair shares the bench queue between its tenants (Config.Fairness).
	Fair bool
	// Tenants spreads e2e's jobs over this many tenants in turn; Small is
	// the small tenant's jobs in flood (default DefaultSmall).
	Tenants, Small int
	// Citus distributes the bench's schema as `migrate up --citus` does,
	// in CitusShards shards (0: Citus's default), before the run.
	Citus       bool
	CitusShards int
	// Keep leaves the bench's schema or file in place.
	Keep     bool
	Progress io.Writer
	Logger   *slog.Logger
	// Configure, when set, changes the client's configuration before it is
	// made (e.g. adds tracing middleware).
	Configure func(*skiplock.Config)
}

// Defaults of Options.
const (
	DefaultJobs     = 100_000
	DefaultDuration = 30 * time.Second
	DefaultRate     = 100
	DefaultBatch    = 1000
	// DefaultHTTPProcs, DefaultClaimMax and DefaultLoops shape --mode http.
	DefaultHTTPProcs = 4
	DefaultClaimMax  = 100
	DefaultLoops     = 4
)

func (o Options) withDefaults() Options {
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	if o.Duration <= 0 {
		o.Duration = DefaultDuration
	}
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Mode == "http" && o.Procs == 0 {
		o.Procs = DefaultHTTPProcs
	}
	if o.ClaimMax <= 0 {
		o.ClaimMax = DefaultClaimMax
	}
	if o.Loops <= 0 {
		o.Loops = DefaultLoops
	}
	if o.Small <= 0 {
		o.Small = DefaultSmall
	}
	return o
}

// Validate names the first bad option.
func (o Options) Validate() error {
	switch {
	case !validMode(o.Mode):
		return fmt.Errorf("--mode: want one of %s, got %q", strings.Join(Modes, ", "), o.Mode)
	case o.Jobs < 0, o.Backlog < 0, o.Scheduled < 0, o.Batch < 0, o.Producers < 0, o.CompleterBatch < 0:
		return fmt.Errorf("--jobs, --batch, --producers, --completer-batch, --backlog and --scheduled must not be negative")
	case o.Workers < 0 || o.Workers > 10000:
		return fmt.Errorf("--workers: must be between 1 and 10000, got %d", o.Workers)
	case o.Duration < 0 || o.FetchCooldown < 0 || o.FetchPollInterval < 0:
		return fmt.Errorf("--duration, --fetch-cooldown and --poll-interval must not be negative")
	case o.CitusShards < 0 || o.CitusShards > 4096:
		return fmt.Errorf("--citus-shards: must be between 0 and 4096, got %d", o.CitusShards)
	case o.CitusShards != 0 && !o.Citus:
		return fmt.Errorf("--citus-shards: only with --citus")
	case o.Rate != 0 && (o.Rate < 1 || o.Rate > 100_000):
		return fmt.Errorf("--rate: must be between 1 and 100000 per second, got %g", o.Rate)
	case !tableOptionsRE.MatchString(o.TableOptions):
		return fmt.Errorf("--table-options: want name=value pairs separated by commas, got %q", o.TableOptions)
	case (o.Backlog > 0 || o.Scheduled > 0 || o.HoldTx || o.HoldSnapshot) && o.Mode != "e2e":
		return fmt.Errorf("--backlog, --scheduled, --hold-tx and --hold-snapshot apply to --mode e2e only")
	case o.HoldTx && o.HoldSnapshot:
		return fmt.Errorf("--hold-tx and --hold-snapshot do not go together")
	case o.Bulk < 0 || o.BulkBatch < 0 || o.BulkBatch > 10000:
		return fmt.Errorf("--bulk must not be negative, --bulk-batch must be between 1 and 10000")
	case (o.Bulk > 0 || o.BulkBatch > 0) && o.Mode != "latency":
		return fmt.Errorf("--bulk and --bulk-batch apply to --mode latency only")
	case o.Claimed && o.Mode != "latency":
		return fmt.Errorf("--claimed applies to --mode latency only")
	case o.Bulk > 0 && o.Purge > 0:
		return fmt.Errorf("--bulk and --purge do not go together")
	case o.AfterIdle && o.Mode != "drain":
		return fmt.Errorf("--after-idle applies to --mode drain only")
	case o.SampleEvery < 0 || (o.SampleEvery > 0 && o.SampleEvery < 10*time.Millisecond):
		return fmt.Errorf("--sample-every: must be at least 10ms, got %s", o.SampleEvery)
	case o.SampleEvery > 0 && o.Mode != "steady":
		return fmt.Errorf("--sample-every applies to --mode steady only")
	case o.VacuumEvery < 0 || (o.VacuumEvery > 0 && o.VacuumEvery < 10*time.Millisecond):
		return fmt.Errorf("--vacuum-every: must be at least 10ms, got %s", o.VacuumEvery)
	case o.VacuumEvery > 0 && o.Mode != "steady" && o.Mode != "e2e":
		return fmt.Errorf("--vacuum-every applies to --mode steady and e2e only")
	case (o.Mode == "latency-remote" || o.Mode == "latency-http") && !isPostgres(o.DatabaseURL):
		return fmt.Errorf("--mode %s: needs a PostgreSQL --database-url (on SQLite another process's insert wakes no worker)", o.Mode)
	case o.Procs < 0 || o.Procs > 64:
		return fmt.Errorf("--procs: must be between 1 and 64, got %d", o.Procs)
	case o.Procs > 0 && o.Mode != "drain" && o.Mode != "e2e" && o.Mode != "http":
		return fmt.Errorf("--procs applies to --mode drain, e2e and http only")
	case o.Procs > 0 && o.AfterIdle:
		return fmt.Errorf("--procs and --after-idle do not go together")
	case o.ClaimMax < 0 || o.ClaimMax > 1000:
		return fmt.Errorf("--claim-max: must be between 1 and 1000, got %d", o.ClaimMax)
	case o.Loops < 0 || o.Loops > 256:
		return fmt.Errorf("--loops: must be between 1 and 256, got %d", o.Loops)
	case (o.ClaimMax > 0 || o.Loops > 0 || o.H2C || o.FullJobs || o.SeparateReports || o.Servers > 0) && o.Mode != "http":
		return fmt.Errorf("--claim-max, --loops, --servers, --h2c, --full-jobs and --separate-reports apply to --mode http only")
	case o.Servers < 0 || o.Servers > 16:
		return fmt.Errorf("--servers: must be between 1 and 16, got %d", o.Servers)
	case o.Servers > o.withDefaults().Procs:
		return fmt.Errorf("--servers: %d servers for %d worker processes (--procs) would leave a server without workers", o.Servers, o.withDefaults().Procs)
	case o.Mode == "commit" && (o.Workers > 0 || o.Producers > 0 || o.FetchCooldown > 0 ||
		o.FetchPollInterval > 0 || o.CompleterBatch > 0 || o.TableOptions != "" || o.Purge > 0 || o.Bulk > 0 || o.Fair):
		return fmt.Errorf("--mode commit runs no Skiplock client: of its flags only --rate, --duration and --keep apply")
	}
	if err := o.validateFlow(); err != nil {
		return err
	}
	return o.validateFair()
}

var tableOptionsRE = regexp.MustCompile(`^([a-z_]+\s*=\s*[0-9.a-z]+(\s*,\s*[a-z_]+\s*=\s*[0-9.a-z]+)*)?$`)

// RunsProcesses reports whether the run starts processes of Exe: worker
// processes (--procs, --mode http), a producer process (latency-remote,
// latency-http), a server process (http, latency-http).
func (o Options) RunsProcesses() bool {
	return o.Procs > 0 || o.Mode == "http" || o.Mode == "latency-remote" || o.Mode == "latency-http"
}

func isPostgres(url string) bool {
	kind, err := dbopen.Kind(url)
	return url != "" && err == nil && kind == "postgres"
}

func validMode(m string) bool {
	for _, v := range Modes {
		if m == v {
			return true
		}
	}
	return false
}
