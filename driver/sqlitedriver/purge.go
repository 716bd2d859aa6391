package sqlitedriver

import (
	"context"
	sqldriver "database/sql/driver"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// purgeBatch is the most archived jobs one purge transaction deletes. Every
// claim, completion and insert waits for the one writer; a transaction of
// 200 deletes holds it a few milliseconds.
const purgeBatch = 200

// purge deletes archived jobs (the janitor's batch) in transactions of
// purgeBatch jobs, handing the writer to whoever waits for it between two.
// They commit without waiting for the disk (synchronous=NORMAL): a crash
// may undo the last of them, never part of one, and the jobs they deleted
// come back expired, to be deleted by the next run; the next commit of any
// other write makes them durable. The writer's connection is pinned while
// it is so set, and set back before anyone else gets it.
func (e executor) purge(ctx context.Context, jobs []driver.ArchivedRef, from, to, now time.Time) ([]int64, error) {
	var gone []int64
	for start := 0; start < len(jobs); start += purgeBatch {
		g, err := e.purgeTx(ctx, jobs[start:min(start+purgeBatch, len(jobs))], from, to, now)
		if err != nil {
			return gone, fmt.Errorf("delete archived jobs: %w", err)
		}
		gone = append(gone, g...)
	}
	return gone, nil
}

func (e executor) purgeTx(ctx context.Context, jobs []driver.ArchivedRef, from, to, now time.Time) (gone []int64, err error) {
	conn, err := e.d.writer.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous=NORMAL"); err != nil {
		return nil, err
	}
	defer func() {
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA synchronous=FULL"); rerr != nil {
			// A connection left without FULL must not serve another write.
			_ = conn.Raw(func(any) error { return sqldriver.ErrBadConn })
			if err == nil {
				err = rerr
			}
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	gone, err = executor{d: e.d, w: tx, r: tx, tx: tx}.deleteArchived(ctx, jobs, from, to, now)
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return gone, tx.Commit()
}
