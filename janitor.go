package skiplock

import (
	"context"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/maintenance"
)

// JanitorRun records one run of the janitor; JanitorReport is what a run
// did, or a dry run would do.
type (
	JanitorRun    = driver.JanitorRun
	JanitorReport = driver.JanitorReport
	JanitorGroup  = driver.JanitorGroup
	// ArchiveFold is a month whose day partitions of the archive were
	// merged into one (PostgreSQL; docs/retention.md).
	ArchiveFold = driver.ArchiveFold
)

// Outcomes of a JanitorRun.
const (
	JanitorOK      = driver.JanitorOK
	JanitorRefused = driver.JanitorRefused
	JanitorFailed  = driver.JanitorFailed
)

// ErrJanitorRefused is the error of a janitor run that the safety check
// refused (it would delete too large a share of the archive, or jobs newer
// than the floor); JanitorOptions.Force runs it anyway.
var ErrJanitorRefused = maintenance.ErrRefused

// JanitorOptions are the options of one janitor run.
type JanitorOptions struct {
	// DryRun reports what would go and deletes nothing.
	DryRun bool
	// Force runs past the safety check.
	Force bool
	// Progress, when set, is told after each batch how many jobs are gone
	// of how many planned.
	Progress func(done, total int64)
}

// MaxJanitorRuns is the most runs JanitorRuns answers.
const MaxJanitorRuns = driver.JanitorRunsKept

// JanitorRun applies the client's Retention once, now, whether or not the
// client leads; the run is recorded (JanitorRuns). A run the safety check
// refused answers its report and an error wrapping ErrJanitorRefused.
func (c *Client) JanitorRun(ctx context.Context, opts JanitorOptions) (*JanitorReport, error) {
	return c.janitor().RunOnce(ctx, maintenance.RunOptions{DryRun: opts.DryRun, Force: opts.Force,
		Progress: opts.Progress})
}

// JanitorRuns answers the last recorded janitor runs of any process,
// newest first (limit 1 to MaxJanitorRuns).
func (c *Client) JanitorRuns(ctx context.Context, limit int) ([]*JanitorRun, error) {
	if limit < 1 || limit > MaxJanitorRuns {
		return nil, invalid("limit", "must be between 1 and %d, got %d", MaxJanitorRuns, limit)
	}
	return c.driver.JanitorRunList(ctx, limit)
}

// Retention answers the client's retention, defaults applied.
func (c *Client) Retention() Retention { return c.config.Retention }

func (c *Client) janitor() *maintenance.Janitor {
	r := c.config.Retention
	j := &maintenance.Janitor{Store: c.driver, Policy: r.policy(), Runner: c.config.ID, Interval: r.Interval,
		MaxShare: r.MaxShare, Floor: r.Floor, Logger: c.log}
	if c.config.Vault != nil {
		j.Vault = c.config.Vault
	}
	if st, err := driver.As[driver.HistoryStore](c.driver); err == nil && r.History != KeepForever {
		j.History, j.KeepHistory = st, r.History
	}
	return j
}
