package maintenance

import (
	"context"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// DefaultJanitorFoldMaxJobs is the most jobs a fold moves: under the
// archive's lock it compares them with the days they came from, so this
// bounds how long completions wait.
const DefaultJanitorFoldMaxJobs = 100_000

// foldMargin: a month folds once its last day is this much older than the
// longest retention that is not for ever. By then every hourly run has
// had its chance to drop a day whose every job expired; the days left keep
// a job for ever (or one still held), and a fold makes no drop harder.
const foldMargin = 2 * day

// foldPlan is a month whose day partitions a run merges into one.
type foldPlan struct {
	month time.Time
	days  []driver.ArchivePartition
	jobs  int64
	bytes int64
}

// fold answers the plan as the report of a fold to be made; the driver
// names the month partition when it makes it.
func (f foldPlan) fold() driver.ArchiveFold {
	return driver.ArchiveFold{Month: f.month, Days: len(f.days), Jobs: f.jobs, Bytes: f.bytes}
}

// folds picks the months to fold: over for longer than the longest finite
// retention and foldMargin, with two day partitions or more that this run
// does not drop, and no more than FoldMaxJobs jobs.
func (c *Janitor) folds(parts []driver.ArchivePartition, drops []dropPlan,
	byDay map[time.Time][]driver.ArchiveGroup, now time.Time) []foldPlan {
	dropped := map[string]bool{}
	for _, d := range drops {
		dropped[d.part.Name] = true
	}
	last := now.Add(-c.Policy.longest() - foldMargin)
	months := map[time.Time]*foldPlan{}
	for _, part := range parts {
		month := time.Date(part.Day.Year(), part.Day.Month(), 1, 0, 0, 0, 0, time.UTC)
		if part.Detached || dropped[part.Name] || part.End.Sub(part.Day) != day || month.AddDate(0, 1, 0).After(last) {
			continue
		}
		f := months[month]
		if f == nil {
			f = &foldPlan{month: month}
			months[month] = f
		}
		f.days = append(f.days, part)
		f.bytes += part.Bytes
		for _, g := range byDay[part.Day] {
			f.jobs += g.Jobs
		}
	}
	var out []foldPlan
	for _, f := range months {
		if len(f.days) >= 2 && f.jobs <= c.FoldMaxJobs {
			out = append(out, *f)
		}
	}
	slices.SortFunc(out, func(a, b foldPlan) int { return a.month.Compare(b.month) })
	return out
}

// fold merges a month's day partitions. A fold not made (the archive's
// lock not had in time, another fold under way) is logged and left to the
// next run: the archive is as it was.
func (d *deletion) fold(ctx context.Context, f foldPlan) error {
	got, err := d.j.Store.ArchiveFoldMonth(ctx, f.month, d.j.FoldMaxJobs)
	month := f.month.Format("2006-01")
	switch {
	case err != nil && ctx.Err() != nil:
		return err
	case err != nil:
		d.j.Logger.Warn("janitor fold", "month", month, "error", err)
	case got.Skipped != "":
		d.j.Logger.Info("janitor fold", "month", month, "skipped", got.Skipped)
	default:
		d.folded = append(d.folded, got)
		d.j.Logger.Info("janitor fold", "month", month, "partition", got.Name, "days", got.Days, "jobs", got.Jobs,
			"bytes", got.Bytes, "lock_held", got.Locked)
	}
	return nil
}
