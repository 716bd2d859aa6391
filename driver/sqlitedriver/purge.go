package sqlitedriver

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// purgeBatch is the most archived jobs one purge transaction deletes. Every
// claim, completion and insert waits for the one writer, at most for one
// purge transaction: one of 50 deletes holds it about 2 ms, its wait for
// the disk included, so a claim waits little longer than for another
// claim (docs/performance.md, "Bulk actions and the purge").
const purgeBatch = 50

// purge deletes archived jobs (the janitor's batch) in transactions of
// purgeBatch jobs. Between two it gives way to the writes waiting for the
// writer (giveWay), so that a claim waits for at most the one purge
// transaction under way. Each commits as every write does, on disk before
// the next begins: the purge flushes its own log, so that the claims'
// commits do not flush it for it.
func (e executor) purge(ctx context.Context, jobs []driver.ArchivedRef, from, to, now time.Time) ([]int64, error) {
	var gone []int64
	var held time.Duration
	for start := 0; start < len(jobs); start += purgeBatch {
		batch := jobs[start:min(start+purgeBatch, len(jobs))]
		e.d.giveWay(ctx, held)
		began := time.Now()
		var g []int64
		err := e.inTx(ctx, func(tx executor) (err error) {
			g, err = tx.deleteArchived(ctx, batch, from, to, now)
			return err
		})
		if err != nil {
			return gone, fmt.Errorf("delete archived jobs: %w", err)
		}
		held = time.Since(began)
		gone = append(gone, g...)
	}
	return gone, nil
}

// giveWay waits until no write is on its way to the writer, for at most
// as long as the purge's last transaction held it (under a load that
// always has a write waiting, the purge still has half the writer), or
// until ctx ends. Bulk actions share the writer by another rule, in the
// library (Client.JobsBulk): they rest as long as their batch held it,
// whether a write waits or not.
func (d *Driver) giveWay(ctx context.Context, most time.Duration) {
	for deadline := time.Now().Add(most); d.wanting.Load() > 0 && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(100 * time.Microsecond)
	}
}
