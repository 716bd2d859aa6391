package sqlitedriver

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

// JobSelect answers the ids of the jobs p picks; see driver.BulkStore.
func (e executor) JobSelect(ctx context.Context, p driver.SelectParams) ([]int64, error) {
	name := "JobSelectLive"
	if p.Archived {
		name = "JobSelectArchived"
	}
	f, err := jobFilterArgs(p.Filter())
	if err != nil {
		return nil, err
	}
	return scanIDs(e.rquery(ctx, name, append(f, sql.Named("after", p.AfterID), sql.Named("limit", p.Limit))...))
}

// JobDeleteArchived removes finished jobs; see driver.BulkStore.
func (e executor) JobDeleteArchived(ctx context.Context, c driver.Chunk) ([]int64, error) {
	var out []int64
	err := e.bulkTx(ctx, func(tx executor) (err error) {
		out, err = scanIDs(tx.wquery(ctx, "JobDeleteArchived", chunkArgs(c)...))
		return err
	})
	slices.Sort(out)
	return out, err
}

// JobCancelMany cancels a chunk of live jobs; see driver.BulkStore.
func (e executor) JobCancelMany(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.bulkTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		args := append(chunkArgs(c), now)
		running, err := scanJobs(tx.wquery(ctx, "JobRequestCancelMany", args...))
		if err != nil {
			return err
		}
		cancelled, err := scanJobs(tx.wquery(ctx, "JobArchiveLiveMany", args...))
		if err != nil || len(cancelled) == 0 {
			out = running
			return err
		}
		gone := driver.JobIDs(cancelled)
		if _, err := tx.wexec(ctx, "JobDeleteMany", sql.Named("ids", jsonText(gone))); err != nil {
			return err
		}
		out = append(cancelled, running...)
		return depgraph.SettleParents(ctx, tx, gone)
	})
	return out, err
}

// JobPauseMany pauses a chunk of live jobs; see driver.BulkStore.
func (e executor) JobPauseMany(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.bulkTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		args := append(chunkArgs(c), now)
		paused, err := scanJobs(tx.wquery(ctx, "JobPauseMany", args...))
		if err != nil {
			return err
		}
		running, err := scanJobs(tx.wquery(ctx, "JobRequestPauseMany", args...))
		out = append(paused, running...)
		return err
	})
	return out, err
}

// JobResumeMany releases a chunk of paused jobs; see driver.BulkStore.
func (e executor) JobResumeMany(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.bulkTx(ctx, func(tx executor) (err error) {
		_, now, _ := nowArgs()
		out, err = scanJobs(tx.wquery(ctx, "JobResumeMany", append(chunkArgs(c), now)...))
		return err
	})
	return out, err
}

// JobRetryMany returns a chunk of archived jobs to the queue; see
// driver.BulkStore. A chunk whose statement meets a key held twice (two
// of its jobs share one) is taken one job at a time.
func (e executor) JobRetryMany(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	out, err := e.retryChunk(ctx, c)
	if isUniqueViolation(err) {
		return driver.RetryEach(c, func(one driver.Chunk) ([]*driver.Job, error) { return e.retryChunk(ctx, one) }, isUniqueViolation)
	}
	return out, err
}

// retryChunk runs JobUnarchiveMany on a chunk, in a transaction, and
// wakes the queues of the jobs it returned.
func (e executor) retryChunk(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.bulkTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		back, err := scanJobs(tx.wquery(ctx, "JobUnarchiveMany", append(chunkArgs(c), now)...))
		if err != nil || len(back) == 0 {
			return err
		}
		out = back
		_, err = tx.wexec(ctx, "ArchiveDeleteMany", sql.Named("ids", jsonText(driver.JobIDs(back))))
		return err
	})
	if err != nil {
		return nil, err
	}
	e.notify(jobQueues(out))
	return out, nil
}

// chunkArgs are a driver.Chunk's (the Chunk fragment of bulk.sql).
func chunkArgs(c driver.Chunk) []any {
	return []any{sql.Named("ids", jsonText(c.IDs)), sql.Named("states", jsonList(c.StateNames())),
		sql.Named("finished_before", optMicros(c.FinishedBefore))}
}

// jobQueues answers the jobs' queues, each once.
func jobQueues(jobs []*driver.Job) []string {
	var queues []string
	for _, j := range jobs {
		if !slices.Contains(queues, j.Queue) {
			queues = append(queues, j.Queue)
		}
	}
	return queues
}

func scanIDs(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
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
