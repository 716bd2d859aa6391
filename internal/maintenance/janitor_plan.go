package maintenance

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

const day = 24 * time.Hour

// plan is what a janitor run is to delete, read before it deletes anything.
type plan struct {
	now      time.Time
	archived int64
	// estimated: archived counts the days read past by the database's
	// estimate (driver.ArchiveSummary.Estimated).
	estimated bool
	held      int64
	// expiring holds, per group of the summary, the part past retention
	// and not held.
	expiring []driver.ArchiveGroup
	// days are the days with expiring jobs, oldest first, with the latest
	// cutoff among their groups (no job finished after it expires).
	days []dayPlan
	// drops are the partitions to drop whole: every job in them expired.
	drops []dropPlan
	// newest is the latest finished_at among the expiring jobs.
	newest time.Time
	// folds are the months whose day partitions merge into one.
	folds []foldPlan
}

type dayPlan struct {
	day    time.Time
	before time.Time
}

type dropPlan struct {
	part driver.ArchivePartition
	jobs []driver.ArchiveGroup
}

// summaryBound is the first UTC midnight from which on no archived job can
// expire, go with its partition or be folded in a run at now: later than
// now less the shortest retention, and than the last month a fold takes.
// A run groups the jobs finished before it and only counts the rest, so
// that its cost follows the old days it may delete, not the recent volume.
func (c *Janitor) summaryBound(now time.Time) time.Time {
	b := now.Add(-c.Policy.longest() - foldMargin)
	if s, ok := c.Policy.shortest(); ok && now.Add(-s).After(b) {
		b = now.Add(-s)
	}
	return b.UTC().Truncate(day).Add(day)
}

// makePlan reads the archive's summary and judges each group by the policy.
func (c *Janitor) makePlan(ctx context.Context, now time.Time) (*plan, error) {
	sum, err := c.Store.ArchiveSummary(ctx, now, c.summaryBound(now))
	if err != nil {
		return nil, err
	}
	parts, err := c.Store.ArchivePartitions(ctx)
	if err != nil {
		return nil, err
	}
	p := &plan{now: now, archived: sum.Later, estimated: sum.Estimated}
	whole := map[time.Time]bool{} // day → every job of it expired
	byDay := map[time.Time][]driver.ArchiveGroup{}
	before := map[time.Time]time.Time{}
	for _, g := range sum.Groups {
		p.archived += g.Jobs
		byDay[g.Day] = append(byDay[g.Day], g)
		exp, cutoff, all, err := c.expired(ctx, g, now)
		if err != nil {
			return nil, err
		}
		if seen, ok := whole[g.Day]; !ok || seen {
			whole[g.Day] = all
		}
		p.held += exp.Held
		if exp.Jobs <= 0 {
			continue
		}
		p.expiring = append(p.expiring, exp)
		if exp.Newest.After(p.newest) {
			p.newest = exp.Newest
		}
		if cutoff.After(before[g.Day]) {
			before[g.Day] = cutoff
		}
	}
	for d, b := range before {
		p.days = append(p.days, dayPlan{day: d, before: b})
	}
	slices.SortFunc(p.days, func(a, b dayPlan) int { return a.day.Compare(b.day) })
	p.drops = c.drops(parts, byDay, whole, now)
	p.folds = c.folds(parts, p.drops, byDay, now)
	return p, nil
}

// expired answers the part of group g past its retention at now and not
// held (Jobs and Bytes), the held jobs among those past it (Held), the
// cutoff before which its jobs expire, and whether every job of g goes.
func (c *Janitor) expired(ctx context.Context, g driver.ArchiveGroup, now time.Time) (
	exp driver.ArchiveGroup, cutoff time.Time, all bool, err error) {
	keep := c.Policy.keep(g.State, g.Queue, g.Kind)
	if keep < 0 {
		return driver.ArchiveGroup{}, cutoff, false, nil
	}
	cutoff = now.Add(-keep)
	switch {
	case g.Newest.Before(cutoff):
		exp, all = g, true
	case !g.Oldest.Before(cutoff):
		return driver.ArchiveGroup{}, cutoff, false, nil
	default:
		if exp, err = c.Store.ArchiveCountBefore(ctx, g, cutoff, now); err != nil {
			return exp, cutoff, false, err
		}
	}
	if exp.Held > 0 {
		all = false
		exp.Bytes -= exp.Bytes * exp.Held / max(exp.Jobs, 1)
		exp.Jobs -= exp.Held
	}
	return exp, cutoff, all, nil
}

// expiredWhole answers whether every job of a partition's days expired
// (true too for none), and the groups of those days.
func expiredWhole(part driver.ArchivePartition, byDay map[time.Time][]driver.ArchiveGroup,
	whole map[time.Time]bool) (bool, []driver.ArchiveGroup) {
	all, jobs := true, []driver.ArchiveGroup(nil)
	for d := part.Day; d.Before(part.End); d = d.Add(day) {
		if gs, ok := byDay[d]; ok {
			all = all && whole[d]
			jobs = append(jobs, gs...)
		}
	}
	return all, jobs
}

// drops picks the partitions (day or month) to drop: left detached by an
// unfinished drop, or every job in them expired (or none there) and their
// range over for longer than the shortest retention, so that no job can
// still land there.
func (c *Janitor) drops(parts []driver.ArchivePartition, byDay map[time.Time][]driver.ArchiveGroup,
	whole map[time.Time]bool, now time.Time) []dropPlan {
	shortest, ok := c.Policy.shortest()
	var out []dropPlan
	for _, part := range parts {
		switch {
		case part.Detached:
			out = append(out, dropPlan{part: part})
		case !ok || part.End.After(now.Add(-shortest)):
		default:
			if all, jobs := expiredWhole(part, byDay, whole); all {
				out = append(out, dropPlan{part: part, jobs: jobs})
			}
		}
	}
	return out
}

// refusal answers why the safety check refuses the plan, or "".
func (c *Janitor) refusal(p *plan) string {
	var jobs int64
	for _, g := range p.expiring {
		jobs += g.Jobs
	}
	if jobs > c.MinShareJobs && float64(jobs) > c.MaxShare*float64(p.archived) {
		about := map[bool]string{true: "about "}[p.estimated]
		return fmt.Sprintf("would delete %d of %s%d archived jobs (%.0f%%), more than the safety share of %.0f%%; "+
			"check with a dry run, then force it", jobs, about, p.archived, 100*float64(jobs)/float64(p.archived), 100*c.MaxShare)
	}
	if jobs > 0 && p.newest.After(p.now.Add(-c.Floor)) {
		return fmt.Sprintf("would delete jobs finished as recently as %s, within the floor of %s; "+
			"check with a dry run, then force it", p.newest.Format(time.RFC3339), c.Floor)
	}
	return ""
}

// report answers the plan as a report of what the run deletes.
func (p *plan) report() *driver.JanitorReport {
	r := &driver.JanitorReport{Archived: p.archived, ArchivedEstimated: p.estimated, Held: p.held}
	type key struct {
		day   time.Time
		state driver.JobState
		queue string
	}
	sums := map[key]*driver.JanitorGroup{}
	r.Run.ByState = map[driver.JobState]int64{}
	for _, g := range p.expiring {
		k := key{g.Day, g.State, g.Queue}
		if sums[k] == nil {
			sums[k] = &driver.JanitorGroup{Day: g.Day, State: g.State, Queue: g.Queue}
		}
		sums[k].Jobs += g.Jobs
		sums[k].Bytes += g.Bytes
		r.Run.Jobs += g.Jobs
		r.Run.ByState[g.State] += g.Jobs
		r.Run.Bytes += g.Bytes
	}
	for _, g := range sums {
		r.Groups = append(r.Groups, *g)
	}
	slices.SortFunc(r.Groups, func(a, b driver.JanitorGroup) int {
		if c := a.Day.Compare(b.Day); c != 0 {
			return c
		}
		if a.State != b.State {
			return cmpString(string(a.State), string(b.State))
		}
		return cmpString(a.Queue, b.Queue)
	})
	for _, d := range p.drops {
		r.Partitions = append(r.Partitions, d.part)
	}
	r.Run.Partitions = len(p.drops)
	for _, f := range p.folds {
		r.Folds = append(r.Folds, f.fold())
	}
	return r
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
