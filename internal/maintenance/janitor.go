package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Defaults of the janitor.
const (
	DefaultJanitorInterval = time.Hour
	// DefaultJanitorBatchSize is the most jobs one delete transaction
	// removes: short enough that SQLite's claims, queued behind the one
	// writer, wait for a few milliseconds at most.
	DefaultJanitorBatchSize = 500
	DefaultJanitorPageSize  = 5000
	// DefaultJanitorMaxShare is the largest share of the archive one run
	// deletes unless forced.
	DefaultJanitorMaxShare = 0.5
	// DefaultJanitorMinShareJobs: a run deleting this many jobs or fewer is
	// never refused for its share (a small archive is all recent).
	DefaultJanitorMinShareJobs = 1000
	// DefaultJanitorFloor: a run never deletes a job finished more recently
	// than this unless forced.
	DefaultJanitorFloor = 24 * time.Hour
)

// Vault stores finished jobs before the janitor deletes them (see
// skiplock.Vault).
type Vault interface {
	Store(ctx context.Context, jobs []*driver.Job) (int, error)
}

// Janitor applies retention: it deletes finished jobs past their state's
// retention, in bounded batches, and drops day partitions whose every job
// expired. With a Vault it deletes only what the vault stored.
type Janitor struct {
	Store  driver.RetentionStore
	Policy Policy
	Vault  Vault
	// History, when set, loses its rows older than KeepHistory on each
	// run that is not a dry run.
	History     driver.HistoryStore
	KeepHistory time.Duration
	// Runner names the process in the run's record.
	Runner       string
	Interval     time.Duration
	BatchSize    int
	PageSize     int
	MaxShare     float64
	MinShareJobs int64
	Floor        time.Duration
	// FoldMaxJobs is the most jobs a month may hold to be folded
	// (PostgreSQL; default DefaultJanitorFoldMaxJobs).
	FoldMaxJobs int64
	// Now is the clock retention is judged by (tests set it).
	Now    func() time.Time
	Logger *slog.Logger
}

// RunOptions are the options of one run.
type RunOptions struct {
	// DryRun reads what would go and deletes nothing.
	DryRun bool
	// Force runs past the safety check.
	Force bool
	// Progress, when set, is told after each batch how many jobs are gone
	// of how many planned.
	Progress func(done, total int64)
}

func (c *Janitor) withDefaults() Janitor {
	j := *c
	if j.Interval <= 0 {
		j.Interval = DefaultJanitorInterval
	}
	if j.BatchSize <= 0 {
		j.BatchSize = DefaultJanitorBatchSize
	}
	if j.PageSize <= 0 {
		j.PageSize = DefaultJanitorPageSize
	}
	if j.MaxShare <= 0 {
		j.MaxShare = DefaultJanitorMaxShare
	}
	if j.MinShareJobs <= 0 {
		j.MinShareJobs = DefaultJanitorMinShareJobs
	}
	if j.Floor <= 0 {
		j.Floor = DefaultJanitorFloor
	}
	if j.FoldMaxJobs <= 0 {
		j.FoldMaxJobs = DefaultJanitorFoldMaxJobs
	}
	if j.Now == nil {
		j.Now = time.Now
	}
	j.Logger = orLogger(j.Logger)
	return j
}

// ErrRefused is the error of a run the safety check refused.
var ErrRefused = errors.New("refused by the janitor's safety check")

// RunOnce runs the janitor once and records the run. A refused run
// answers its report and an error wrapping ErrRefused.
func (c *Janitor) RunOnce(ctx context.Context, opts RunOptions) (*driver.JanitorReport, error) {
	j := c.withDefaults()
	started, clock := j.Now().UTC(), time.Now()
	rep, err := j.run(ctx, started, opts)
	if rep == nil {
		rep = &driver.JanitorReport{}
	}
	rep.Run.StartedAt, rep.Run.FinishedAt = started, started.Add(time.Since(clock))
	rep.Run.Runner, rep.Run.DryRun, rep.Run.Forced = j.Runner, opts.DryRun, opts.Force
	switch {
	case errors.Is(err, ErrRefused):
		rep.Run.Outcome, rep.Run.Message = driver.JanitorRefused, err.Error()
	case err != nil:
		rep.Run.Outcome, rep.Run.Message = driver.JanitorFailed, err.Error()
	default:
		rep.Run.Outcome = driver.JanitorOK
	}
	// Recorded even when the run failed or ctx ended: the record is how
	// an operator learns of it.
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	id, serr := j.Store.JanitorRunSave(saveCtx, &rep.Run)
	rep.Run.ID = id
	j.log(rep)
	if err == nil && serr != nil {
		err = serr
	}
	return rep, err
}

func (j *Janitor) log(rep *driver.JanitorReport) {
	r := rep.Run
	attrs := []any{"outcome", r.Outcome, "dry_run", r.DryRun, "forced", r.Forced, "jobs", r.Jobs,
		"partitions", r.Partitions, "folded", len(rep.Folds), "bytes", r.Bytes, "vaulted", r.Vaulted,
		"duration", r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond)}
	switch r.Outcome {
	case driver.JanitorOK:
		j.Logger.Info("janitor run", attrs...)
	default:
		j.Logger.Warn("janitor run", append(attrs, "message", r.Message)...)
	}
}

func (j *Janitor) run(ctx context.Context, now time.Time, opts RunOptions) (*driver.JanitorReport, error) {
	if !opts.DryRun {
		j.pruneHistory(ctx, now)
	}
	p, err := j.makePlan(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	rep := p.report()
	if why := j.refusal(p); why != "" && !opts.Force {
		return rep, fmt.Errorf("%w: %s", ErrRefused, why)
	}
	if opts.DryRun {
		return rep, nil
	}
	planned := rep.Run.Jobs
	d := &deletion{j: j, plan: p, opts: opts, total: planned, byState: map[driver.JobState]int64{}}
	err = d.run(ctx)
	rep.Run.Jobs, rep.Run.ByState, rep.Run.Vaulted = d.done, d.byState, d.vaulted
	rep.Run.Partitions, rep.Partitions, rep.Folds = len(d.dropped), d.dropped, d.folded
	if d.done < planned && planned > 0 {
		rep.Run.Bytes = rep.Run.Bytes * d.done / planned
	}
	return rep, err
}

// pruneHistory deletes the history past its retention. The archive's
// safety check does not apply: the history holds counts, never jobs. A
// failure is logged and the run goes on.
func (j *Janitor) pruneHistory(ctx context.Context, now time.Time) {
	if j.History == nil || j.KeepHistory <= 0 {
		return
	}
	n, err := j.History.HistoryPrune(ctx, now.Add(-j.KeepHistory))
	if err != nil {
		j.Logger.Warn("janitor: prune the history", "error", err)
		return
	}
	j.Logger.Debug("janitor: pruned the history", "rows", n)
}

// Run runs the janitor every Interval until ctx ends.
func (c *Janitor) Run(ctx context.Context) {
	j := c.withDefaults()
	runEvery(ctx, "janitor", j.Interval, j.Logger, func(ctx context.Context) error {
		_, err := c.RunOnce(ctx, RunOptions{})
		if errors.Is(err, ErrRefused) {
			return nil // logged and recorded: an operator decides
		}
		return err
	})
}
