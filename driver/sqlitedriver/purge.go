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

// bulkTx is inTx for a bulk write (a purge transaction, a batch of a bulk
// action): it first gives way to the writes waiting for the writer, so
// that a claim waits for at most the one bulk transaction under way. In a
// caller's transaction, which holds the writer already, it runs fn there.
func (e executor) bulkTx(ctx context.Context, fn func(tx executor) error) error {
	if e.tx != nil {
		return e.inTx(ctx, fn)
	}
	e.d.giveWay(ctx, time.Duration(e.d.bulkHeld.Load()))
	began := time.Now()
	err := e.inTx(ctx, fn)
	e.d.bulkHeld.Store(int64(time.Since(began)))
	return err
}

// giveWay waits until no write is on its way to the writer, for at most
// most (how long the last bulk write held it: under a load that always
// has a write waiting, bulk writes still have half the writer), or until
// ctx ends.
func (d *Driver) giveWay(ctx context.Context, most time.Duration) {
	for deadline := time.Now().Add(most); d.wanting.Load() > 0 && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(100 * time.Microsecond)
	}
}
