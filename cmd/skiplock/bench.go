package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/skiplock/skiplock/bench"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/dbopen"
	"github.com/skiplock/skiplock/skiplockotel"
)

func init() { extraCommands = append(extraCommands, newBenchCmd) }

// noExplicitZero refuses 0 given for the named flags: in bench.Options 0
// means "the default", but said on the command line it is a mistake
// (--jobs 0 would wait for ever).
func noExplicitZero(cmd *cobra.Command, names ...string) error {
	for _, name := range names {
		if fl := cmd.Flags().Lookup(name); fl.Changed && fl.Value.String() == "0" {
			return usagef("--%s: must be at least 1, got 0", name)
		}
	}
	return nil
}

func newBenchCmd(g *globals) *cobra.Command {
	o := bench.Options{}
	var cpuProfile, memProfile string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure throughput and latency in a fresh schema (or temporary SQLite file)",
		Long: `Measure Skiplock on a database without touching its data: PostgreSQL runs in a
fresh schema skiplock_bench_<rand> dropped afterwards (unless --keep); SQLite
runs in a temporary file unless --database-url names one.

Modes: drain (insert --jobs, then time working them all), e2e (insert and
work at once for --duration), latency (enqueue at --rate, enqueue→start
percentiles; the producer is this process's own client, so that a job
inserted while a worker is free starts at its insert), latency-remote (the
same, enqueued by a producer process through the library into PostgreSQL
and taken by this process's workers: the wake-up and the claim included),
latency-http (the same, enqueued by a producer process through
POST /v1/jobs of a skiplock serve process that works nothing), insert
(bulk insert rate), http (e2e through a skiplock serve process and --procs
HTTP worker processes claiming --claim-max jobs a call,
each claim carrying the report of the jobs before it),
steady (offer --rate jobs a second for --duration, open loop: due→start
percentiles, claim p95, the hot table's dead tuples sampled every second),
flood (one tenant's --jobs, then --small jobs of another, worked together:
how many of the first's had run when the second's last one ran), commit
(the database's own floor: a bare one-row INSERT into a table of the
bench's own, each its own transaction, at --rate for --duration;
percentiles of the calls; no Skiplock runs). The last stdout line is
"result mode=… jobs=… jobs_per_sec=… p50_ms=… p95_ms=… p99_ms=…".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.DatabaseURL, o.ListenDatabaseURL = g.databaseURL, g.listenURL()
			if o.DatabaseURL == "" {
				o.DatabaseURL = os.Getenv("SKIPLOCK_DATABASE_URL")
			}
			if o.DatabaseURL != "" {
				if _, err := dbopen.Kind(o.DatabaseURL); err != nil {
					return usagef("--database-url: %v", err)
				}
			}
			if err := noExplicitZero(cmd, "jobs", "rate", "workers", "batch", "producers", "completer-batch", "claim-max", "loops"); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return usagef("%v", err)
			}
			if o.RunsProcesses() {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find the skiplock binary for the bench's processes: %w", err)
				}
				o.Exe = exe
			}
			o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			if isatty.IsTerminal(os.Stderr.Fd()) {
				o.Progress = os.Stderr
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return usagef("--cpuprofile: %v", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("start cpu profile: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			if memProfile != "" {
				f, err := os.Create(memProfile)
				if err != nil {
					return usagef("--memprofile: %v", err)
				}
				defer f.Close()
				defer func() { _ = pprof.Lookup("allocs").WriteTo(f, 0) }()
			}
			// Tracing as serve does it, when OTEL_* asks: to measure its cost.
			traces, err := setupTracing(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = traces.shutdown() }()
			if traces.on() {
				o.Configure = skiplockotel.New(&skiplockotel.Config{TracerProvider: traces.tp}).Install
			}
			res, err := bench.Run(cmd.Context(), o)
			if err != nil {
				return fmt.Errorf("bench %s: %w", o.Mode, err)
			}
			return output(cmd, newBenchView(res), line("%s", res.Line()))
		},
	}
	addJSONFlag(cmd)
	f := cmd.Flags()
	f.StringVar(&o.Mode, "mode", "drain", strings.Join(bench.Modes, ", "))
	f.IntVar(&o.Jobs, "jobs", bench.DefaultJobs, "jobs to drain or insert")
	f.DurationVar(&o.Duration, "duration", bench.DefaultDuration, "how long e2e, the latency modes, http, steady and commit run")
	f.Float64Var(&o.Rate, "rate", bench.DefaultRate, "latency modes: jobs enqueued per second, one at a time; steady: jobs offered per second, those due at once in one insert; commit: inserts per second")
	f.IntVar(&o.Workers, "workers", 0, "MaxWorkers of the bench queue (default Skiplock's, 1000)")
	addPoolFlags(f, &o.Pools)
	f.IntVar(&o.Batch, "batch", bench.DefaultBatch, "jobs per InsertMany")
	f.IntVar(&o.Producers, "producers", 0, "goroutines inserting at once (default: 1 for e2e and drain, one per CPU for insert)")
	f.DurationVar(&o.FetchCooldown, "fetch-cooldown", 0, "least time between two claims (default Skiplock's)")
	f.DurationVar(&o.FetchPollInterval, "poll-interval", 0, "fallback claim interval (default Skiplock's)")
	f.IntVar(&o.CompleterBatch, "completer-batch", 0, "most completions per flush (default Skiplock's)")
	f.IntVar(&o.Backlog, "backlog", 0, "e2e: pending jobs parked in another queue")
	f.IntVar(&o.Scheduled, "scheduled", 0, "e2e: jobs scheduled a day ahead in the bench queue")
	f.BoolVar(&o.HoldTx, "hold-tx", false, "e2e: hold a transaction open that has read the hot table (PostgreSQL)")
	f.BoolVar(&o.HoldSnapshot, "hold-snapshot", false, "e2e: hold a snapshot open in a transaction that reads none of Skiplock's tables (PostgreSQL)")
	f.BoolVar(&o.AfterIdle, "after-idle", false, "drain: start the workers first, idle on the emptied, vacuumed table, then insert --jobs at once")
	f.StringVar(&o.TableOptions, "table-options", "", "PostgreSQL: storage parameters for the hot table, e.g. autovacuum_vacuum_scale_factor=0")
	f.DurationVar(&o.SampleEvery, "sample-every", 0, "steady: how often the hot table's dead tuples are sampled (default 1s)")
	f.DurationVar(&o.VacuumEvery, "vacuum-every", 0, "steady and e2e: vacuum the hot table this often from the bench (PostgreSQL)")
	f.IntVar(&o.Procs, "procs", 0, "worker processes: HTTP workers in http mode (default 4), library clients in drain and e2e (default: none, this process works)")
	f.IntVar(&o.ClaimMax, "claim-max", 0, "http: jobs per claim (default 100)")
	f.IntVar(&o.Loops, "loops", 0, "http: claims in flight at once in each worker process (default 4)")
	f.IntVar(&o.Servers, "servers", 0, "http: skiplock serve processes the worker processes share, each with the --pool-* flags (default 1)")
	f.BoolVar(&o.H2C, "h2c", false, "http: the workers speak HTTP/2 without TLS")
	f.BoolVar(&o.FullJobs, "full-jobs", false, "http: claims answer whole job objects, not just id, attempt, kind and payload")
	f.BoolVar(&o.SeparateReports, "separate-reports", false, "http: workers report each claim's jobs in a POST /v1/jobs/complete of their own, not with their next claim")
	f.IntVar(&o.Purge, "purge", 0, "latency: seed this many jobs finished 10 days ago, and purge them with the janitor during the run")
	f.IntVar(&o.Bulk, "bulk", 0, "latency: seed this many pending jobs in a queue of their own, and pause, resume, cancel, retry, cancel and delete them with bulk actions during the run")
	f.BoolVar(&o.Claimed, "claimed", false, "latency: insert the jobs pending, for a worker to claim, instead of starting each at its insert; with --purge or --bulk, adds the claims' p50/p95/p99 during and after")
	f.IntVar(&o.BulkBatch, "bulk-batch", 0, "with --bulk: jobs per batch of the bulk actions (default Skiplock's)")
	f.IntVar(&o.FlowKeys, "flow-keys", 0, "e2e and drain: spread the jobs over this many concurrency keys, to measure flow control (docs/flow-control.md)")
	f.IntVar(&o.FlowConcurrency, "flow-concurrency", 0, fmt.Sprintf("with --flow-keys: running jobs allowed per key (default %d: no limit in effect)", bench.DefaultFlowConcurrency))
	f.IntVar(&o.FlowRate, "flow-rate", 0, "with --flow-keys: jobs allowed to start per key per second")
	f.BoolVar(&o.Fair, "fair", false, "share the bench queue between its tenants (Config.Fairness)")
	f.IntVar(&o.Tenants, "tenants", 0, "e2e: spread the jobs over this many tenants in turn")
	f.IntVar(&o.Small, "small", 0, "flood: jobs the small tenant enqueues after the big one's --jobs (default 100)")
	f.BoolVar(&o.Citus, "citus", false, "distribute the bench schema on Citus first, as migrate up --citus does (docs/scale.md)")
	f.IntVar(&o.CitusShards, "citus-shards", 0, "with --citus: shards of the jobs and the archive (0: Citus's default)")
	f.BoolVar(&o.Keep, "keep", false, "keep the bench schema or file")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	f.StringVar(&memProfile, "memprofile", "", "write an allocation profile to this file at the end")
	return cmd
}

// benchView is a bench result in --json: the figures of the result line.
type benchView struct {
	Mode           string   `json:"mode"`
	Jobs           int64    `json:"jobs"`
	ElapsedSeconds float64  `json:"elapsed_seconds"`
	JobsPerSec     float64  `json:"jobs_per_sec"`
	P50Ms          float64  `json:"p50_ms"`
	P95Ms          float64  `json:"p95_ms"`
	P99Ms          float64  `json:"p99_ms"`
	Extra          []string `json:"extra"`
}

func newBenchView(r bench.Result) benchView {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	extra := r.Extra
	if extra == nil {
		extra = []string{}
	}
	return benchView{Mode: r.Mode, Jobs: r.Jobs, ElapsedSeconds: r.Elapsed.Seconds(), JobsPerSec: r.JobsPerSec,
		P50Ms: ms(r.P50), P95Ms: ms(r.P95), P99Ms: ms(r.P99), Extra: extra}
}

// addPoolFlags declares the flags of a process's connection pools by role
// (docs/scale.md#connection-budget).
func addPoolFlags(f *pflag.FlagSet, p *pgdriver.Pools) {
	f.IntVar(&p.Claims, "pool-claims", 0, "PostgreSQL connections for claims (default: a share of --pool-budget)")
	f.IntVar(&p.Completions, "pool-completions", 0, "PostgreSQL connections for completions, failures and heartbeats")
	f.IntVar(&p.Maintenance, "pool-maintenance", 0, "PostgreSQL connections for everything else")
	f.IntVar(&p.Budget, "pool-budget", 0, "most PostgreSQL connections of each process, listener included (0: no split)")
}
