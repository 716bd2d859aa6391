package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// deletion carries out a plan: partitions first, then the expired jobs of
// each day in pages, each page deleted in short batches.
type deletion struct {
	j       *Janitor
	plan    *plan
	opts    RunOptions
	total   int64
	done    int64
	vaulted int64
	byState map[driver.JobState]int64
	dropped []driver.ArchivePartition
	folded  []driver.ArchiveFold
}

func (d *deletion) run(ctx context.Context) error {
	for _, drop := range d.plan.drops {
		if err := d.drop(ctx, drop); err != nil {
			return err
		}
	}
	for _, day := range d.plan.days {
		if err := d.deleteDay(ctx, day); err != nil {
			return err
		}
	}
	// Last: a fold copies what the deletes left.
	for _, f := range d.plan.folds {
		if err := d.fold(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// drop stores a partition's jobs in the vault (when there is one), then
// drops the partition.
func (d *deletion) drop(ctx context.Context, drop dropPlan) error {
	if d.j.Vault != nil && !drop.part.Detached {
		p := driver.ExpiredParams{From: drop.part.Day, To: drop.part.End, Before: drop.part.End,
			Now: d.plan.now, Limit: d.j.PageSize}
		for {
			refs, err := d.j.Store.ArchiveExpired(ctx, p)
			if err != nil {
				return err
			}
			for start := 0; start < len(refs); start += d.j.BatchSize {
				if _, err := d.store(ctx, refs[start:min(start+d.j.BatchSize, len(refs))]); err != nil {
					return err
				}
			}
			if len(refs) < p.Limit {
				break
			}
			p.After = &refs[len(refs)-1]
		}
	}
	if err := d.j.Store.ArchiveDropPartition(ctx, drop.part.Name, d.plan.now); err != nil {
		return err
	}
	d.dropped = append(d.dropped, drop.part)
	for _, g := range drop.jobs {
		d.done += g.Jobs
		d.byState[g.State] += g.Jobs
	}
	d.progress()
	return nil
}

// deleteDay deletes the expired jobs finished on one day.
func (d *deletion) deleteDay(ctx context.Context, dp dayPlan) error {
	p := driver.ExpiredParams{From: dp.day, To: dp.day.Add(day), Before: dp.before, Now: d.plan.now,
		Limit: d.j.PageSize}
	for {
		refs, err := d.j.Store.ArchiveExpired(ctx, p)
		if err != nil {
			return err
		}
		var batch []driver.ArchivedRef
		for i, ref := range refs {
			if d.j.Policy.expired(ref, d.plan.now) {
				batch = append(batch, ref)
			}
			if len(batch) == d.j.BatchSize || (i == len(refs)-1 && len(batch) > 0) {
				if err := d.deleteBatch(ctx, dp, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if len(refs) < p.Limit {
			return nil
		}
		p.After = &refs[len(refs)-1]
	}
}

// deleteBatch deletes one batch of jobs, after the vault stored them. A
// job is deleted only in the version the run judged, and with a vault only
// in the version the vault holds: one retried (and maybe finished again)
// meanwhile stays.
func (d *deletion) deleteBatch(ctx context.Context, dp dayPlan, batch []driver.ArchivedRef) error {
	if d.j.Vault != nil {
		var err error
		if batch, err = d.store(ctx, batch); err != nil {
			return err
		}
	}
	gone, err := d.j.Store.ArchiveDelete(ctx, batch, dp.day, dp.day.Add(day), d.plan.now)
	if err != nil {
		return err
	}
	state := make(map[int64]driver.JobState, len(batch))
	for _, r := range batch {
		state[r.ID] = r.State
	}
	for _, id := range gone {
		d.byState[state[id]]++
	}
	d.done += int64(len(gone))
	d.progress()
	return ctx.Err()
}

// store hands the jobs refs name to the vault, and answers the refs whose
// version (finish time) the vault now holds: those read as they were
// judged. The run stops at the vault's first refusal, so that nothing it
// did not accept is deleted.
func (d *deletion) store(ctx context.Context, refs []driver.ArchivedRef) ([]driver.ArchivedRef, error) {
	jobs, err := d.j.Store.ArchiveJobs(ctx, refIDs(refs))
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	n, err := d.j.Vault.Store(ctx, jobs)
	if err != nil {
		return nil, fmt.Errorf("vault: %w (nothing it did not store was deleted)", err)
	}
	d.vaulted += int64(n)
	held := make(map[int64]time.Time, len(jobs))
	for _, j := range jobs {
		if j.FinishedAt != nil {
			held[j.ID] = *j.FinishedAt
		}
	}
	kept := refs[:0:0]
	for _, r := range refs {
		if at, ok := held[r.ID]; ok && at.Equal(r.FinishedAt) {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

func (d *deletion) progress() {
	if d.opts.Progress != nil {
		d.opts.Progress(d.done, d.total)
	}
}

func refIDs(refs []driver.ArchivedRef) []int64 {
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	return ids
}
