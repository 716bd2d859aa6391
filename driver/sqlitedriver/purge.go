package sqlitedriver

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// purgeBatch is the most archived jobs one purge transaction deletes. Every
// claim, completion and insert waits for the one writer, at most for one
// bulk transaction (bulkTx): one of 50 deletes holds it about 2 ms,
// its wait for the disk included, so a claim waits little longer than for
// another claim (docs/performance.md, "Bulk actions and the purge").
const purgeBatch = 50

// purge deletes archived jobs (the janitor's batch) in transactions of
// purgeBatch jobs, each a bulk write (bulkTx). Each commits as every write
// does, on disk before the next begins: the purge flushes its own log, so
// that the claims' commits do not flush it for it.
func (e executor) purge(ctx context.Context, jobs []driver.ArchivedRef, from, to, now time.Time) ([]int64, error) {
	var gone []int64
	for start := 0; start < len(jobs); start += purgeBatch {
		batch := jobs[start:min(start+purgeBatch, len(jobs))]
		var g []int64
		err := e.bulkTx(ctx, func(tx executor) (err error) {
			g, err = tx.deleteArchived(ctx, batch, from, to, now)
			return err
		})
		if err != nil {
			return gone, fmt.Errorf("delete archived jobs: %w", err)
		}
		gone = append(gone, g...)
	}
	return gone, nil
}
