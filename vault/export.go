package vault

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock"
)

// DefaultExportBatch is how many jobs Export gathers before it stores them:
// the most jobs one part holds, and about what it keeps in memory.
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
	// Done is the share of the database's id range read, 0 to 1.
	Done float64
}

// exportPage is how many jobs Export reads from the database at a time.
const exportPage = skiplock.MaxJobListLimit

var finishedStates = []skiplock.JobState{skiplock.StateCompleted, skiplock.StateFailed, skiplock.StateCancelled}

// Export copies the finished jobs of c's database (live and archived)
// that finished in [From, To) to the vault, skipping those it holds: run
// again after an interruption, it stores only what is missing. It reads
// the jobs through c.JobList, newest id first.
func Export(ctx context.Context, c *skiplock.Client, v *Vault, p ExportParams) (ExportProgress, error) {
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
	var (
		st      ExportProgress
		batch   []*skiplock.JobRow
		cursor  int64
		firstID int64
	)
	flush := func() error {
		res, err := v.Put(ctx, batch)
		if err != nil {
			return err
		}
		st.Stored += res.Stored
		st.Held += res.Held
		batch = batch[:0]
		return nil
	}
	q := QueryParams{From: p.From, To: p.To}
	for {
		page, err := c.JobList(ctx, skiplock.JobListParams{States: finishedStates, BeforeID: cursor, Limit: exportPage})
		if err != nil {
			return st, fmt.Errorf("read finished jobs: %w", err)
		}
		if len(page) == 0 {
			break
		}
		if firstID == 0 {
			firstID = page[0].ID
		}
		for _, j := range page {
			st.Scanned++
			if j.FinishedAt == nil || !q.match(j) {
				continue
			}
			if batch = append(batch, j); len(batch) >= p.Batch {
				if err := flush(); err != nil {
					return st, err
				}
			}
		}
		cursor = page[len(page)-1].ID
		st.Done = float64(firstID-cursor+1) / float64(firstID)
		if p.Progress != nil {
			p.Progress(st)
		}
		if len(page) < exportPage {
			break
		}
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return st, err
		}
	}
	st.Done = 1
	return st, nil
}
