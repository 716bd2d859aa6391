package vault

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
)

// DefaultExportBatch is how many jobs Export gathers before it stores them:
// the most jobs one part holds. Export keeps about twice that in memory: the
// batch it gathers and the one it stores.
const DefaultExportBatch = 50_000

// ExportParams is one Export.
type ExportParams struct {
	// From and To bound the finish time of the jobs exported:
	// From ≤ finished_at < To; a zero bound is open.
	From, To time.Time
	// Batch is how many jobs are stored at a time (DefaultExportBatch).
	Batch int
	// Progress, when set, is called after each page read.
	Progress func(ExportProgress)
}

// ExportProgress is how far an Export is.
type ExportProgress struct {
	// Scanned counts the finished jobs read; Stored those written to the
	// vault; Held those it had already.
	Scanned, Stored, Held int
	// Done is about the share of the range read, 0 to 1, by the finish
	// time of the last job read.
	Done float64
}

// exportPage is how many jobs Export reads from the database at a time,
// each page one short statement (a long one would hold back vacuum).
const exportPage = skiplock.MaxJobListLimit

// Export copies the finished jobs of c's database that finished in
// [From, To) to the vault, skipping the versions it holds: run again after
// an interruption, it stores only what is missing. It reads the archive a
// page at a time in the database's own order (driver.RetentionStore's
// ArchiveRange), so that its memory is bounded by Batch whatever the range;
// it reads the next batch while it stores one.
func Export(ctx context.Context, c *skiplock.Client, v *Vault, p ExportParams) (st ExportProgress, err error) {
	if p.Batch < 0 {
		return ExportProgress{}, fmt.Errorf("batch: must not be negative, got %d", p.Batch)
	}
	if p.Batch == 0 {
		p.Batch = DefaultExportBatch
	}
	if !p.From.IsZero() && !p.To.IsZero() && !p.From.Before(p.To) {
		return ExportProgress{}, fmt.Errorf("to: must be after from (%s), got %s",
			p.From.UTC().Format(time.RFC3339), p.To.UTC().Format(time.RFC3339))
	}
	store, err := driver.As[driver.RetentionStore](c.Driver())
	if err != nil {
		return ExportProgress{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		batch []*skiplock.JobRow
		spare []*skiplock.JobRow // the batch the last store had, for reuse
		share = rangeShare(p.From, p.To, time.Now())
		// One store runs while the next batch is read: the database, the
		// Parquet encoder and the vault's writes work at once. Stores run one
		// at a time and in order, as they would one after the other.
		storing chan storeDone
	)
	wait := func() error {
		if storing == nil {
			return nil
		}
		d := <-storing
		storing = nil
		st.Stored += d.res.Stored
		st.Held += d.res.Held
		spare = d.jobs[:0]
		return d.err
	}
	// A store under way when Export returns early ends (and counts) first:
	// no write outlives Export.
	defer func() {
		if werr := wait(); err == nil {
			err = werr
		}
	}()
	flush := func() error {
		if err := wait(); err != nil {
			return err
		}
		storing = make(chan storeDone, 1)
		go func(done chan<- storeDone, jobs []*skiplock.JobRow) {
			res, err := v.Put(ctx, jobs)
			done <- storeDone{jobs, res, err}
		}(storing, batch)
		batch, spare = spare, nil
		return nil
	}
	pages := readPages(ctx, store, driver.RangeParams{From: p.From, To: p.To, Limit: exportPage})
	for pg := range pages {
		if pg.err != nil {
			return st, fmt.Errorf("read finished jobs: %w", pg.err)
		}
		page := pg.jobs
		for _, j := range page {
			st.Scanned++
			if j.FinishedAt == nil {
				continue
			}
			if batch = append(batch, j); len(batch) >= p.Batch {
				if err := flush(); err != nil {
					return st, err
				}
			}
		}
		if len(page) > 0 {
			st.Done = max(st.Done, share(*page[len(page)-1].FinishedAt))
		}
		if p.Progress != nil {
			p.Progress(st)
		}
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return st, err
		}
	}
	if err := wait(); err != nil {
		return st, err
	}
	st.Done = 1
	return st, nil
}

// storeDone is the end of one store of Export.
type storeDone struct {
	jobs []*skiplock.JobRow
	res  StoreResult
	err  error
}

// page is one read of readPages.
type page struct {
	jobs []*skiplock.JobRow
	err  error
}

// readPages reads q's pages one ahead of their reader, until a short page,
// an error (the last page sent) or ctx's end.
func readPages(ctx context.Context, store driver.RetentionStore, q driver.RangeParams) <-chan page {
	out := make(chan page, 1)
	go func() {
		defer close(out)
		for {
			jobs, err := store.ArchiveRange(ctx, q)
			select {
			case out <- page{jobs, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(jobs) < q.Limit {
				return
			}
			last := jobs[len(jobs)-1]
			q.After = &driver.ArchivedRef{ID: last.ID, FinishedAt: *last.FinishedAt}
		}
	}()
	return out
}

// rangeShare answers how far into [from, to) a finish time is, 0 to 1,
// for progress: the first finish time seen stands for an open from, now
// for an open to.
func rangeShare(from, to, now time.Time) func(time.Time) float64 {
	if to.IsZero() {
		to = now
	}
	return func(at time.Time) float64 {
		if from.IsZero() {
			from = at
		}
		span := to.Sub(from)
		if span <= 0 {
			return 0
		}
		return min(max(float64(at.Sub(from))/float64(span), 0), 1)
	}
}
