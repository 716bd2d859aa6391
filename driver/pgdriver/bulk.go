package pgdriver

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
	"github.com/skiplock/skiplock/driver/sqlset"
)

// JobSelect answers the ids of the jobs p picks; see driver.BulkStore.
func (e executor) JobSelect(ctx context.Context, p driver.SelectParams) ([]int64, error) {
	stmt := jobSelectLive
	if p.Archived {
		stmt = jobSelectArchived
	}
	f, err := jobFilterArgs(p.Filter())
	if err != nil {
		return nil, err
	}
	// Unprepared, as JobList: each page is planned with its filter's values,
	// so that a selection by ids, payload or metadata reads their indexes
	// instead of a generic plan's walk of every job by id. An unnamed
	// statement described once per connection: safe behind PgBouncer too.
	rows, err := e.q.Query(ctx, stmt.SQL, append([]any{pgx.QueryExecModeCacheDescribe},
		stmt.Args(selectArgs{filterArgs: f, After: p.AfterID, Limit: p.Limit})...)...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// JobDeleteArchived removes finished jobs; see driver.BulkStore.
func (e executor) JobDeleteArchived(ctx context.Context, c driver.Chunk) ([]int64, error) {
	rows, err := e.q.Query(ctx, jobDeleteArchived.SQL, jobDeleteArchived.Args(chunkArgsOf(c))...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	slices.Sort(out)
	return slices.Compact(out), err
}

// JobCancelMany cancels a chunk of live jobs; see driver.BulkStore.
func (e executor) JobCancelMany(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.bulkTx(ctx, func(tx executor) (err error) {
		out, err = scanJobs(tx.q.Query(ctx, jobCancelMany.SQL, jobCancelMany.Args(chunkArgsOf(c))...))
		if err != nil {
			return err
		}
		var cancelled []int64
		for _, j := range out {
			if j.State == driver.StateCancelled {
				cancelled = append(cancelled, j.ID)
			}
		}
		return depgraph.SettleParents(ctx, tx, cancelled)
	})
	return out, err
}

// JobPauseMany pauses a chunk of live jobs; see driver.BulkStore.
func (e executor) JobPauseMany(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	return e.bulkMany(ctx, jobPauseMany, c)
}

// JobResumeMany releases a chunk of paused jobs; see driver.BulkStore.
func (e executor) JobResumeMany(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	return e.chunkMany(ctx, jobResumeMany, citusJobQueues, citusJobResumeMany, c)
}

// chunkMany runs stmt on a chunk (bulkMany); on Citus, citusStmt on each
// queue's share of it, as find finds them (citusBulk).
func (e executor) chunkMany(ctx context.Context, stmt sqlset.Stmt[chunkArgs], find sqlset.Stmt[idsArg], citusStmt sqlset.Stmt[queueIDsArgs], c driver.Chunk) ([]*driver.Job, error) {
	if on, err := e.onCitus(ctx); err != nil {
		return nil, err
	} else if on {
		return e.citusBulk(ctx, find, citusStmt, c)
	}
	return e.bulkMany(ctx, stmt, c)
}

// bulkMany runs one set-based statement on a chunk.
func (e executor) bulkMany(ctx context.Context, stmt sqlset.Stmt[chunkArgs], c driver.Chunk) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.bulkTx(ctx, func(tx executor) (err error) {
		out, err = scanJobs(tx.q.Query(ctx, stmt.SQL, stmt.Args(chunkArgsOf(c))...))
		return err
	})
	return out, err
}

// bulkTx runs fn in a transaction, again when the database broke a
// deadlock by ending it: a chunk's locks may cross those of a statement
// that takes rows in another order (the release of waiting jobs).
func (e executor) bulkTx(ctx context.Context, fn func(tx executor) error) error {
	for try := 1; ; try++ {
		err := e.inTx(ctx, fn)
		if try == 3 || !hasCode(err, "40P01", "40001") {
			return err
		}
	}
}

// JobRetryMany returns a chunk of archived jobs to the queue; see
// driver.BulkStore. A chunk whose statement meets a key held twice (two
// of its jobs share one, or a job inserted meanwhile took it) is taken one
// job at a time.
func (e executor) JobRetryMany(ctx context.Context, c driver.Chunk) ([]*driver.Job, error) {
	retry := func(c driver.Chunk) ([]*driver.Job, error) {
		return e.chunkMany(ctx, jobUnarchiveMany, citusArchivedQueues, citusJobUnarchiveMany, c)
	}
	out, err := retry(c)
	if !isUniqueViolation(err) {
		return out, err
	}
	return driver.RetryEach(c, retry, isUniqueViolation)
}

var (
	jobCancelMany     = bind[chunkArgs]("JobCancelMany")
	jobPauseMany      = bind[chunkArgs]("JobPauseMany")
	jobResumeMany     = bind[chunkArgs]("JobResumeMany")
	jobUnarchiveMany  = bind[chunkArgs]("JobUnarchiveMany")
	jobDeleteArchived = bind[chunkArgs]("JobDeleteArchived")
)

// chunkArgs are a driver.Chunk's (the Chunk fragment of bulk.sql).
type chunkArgs struct {
	IDs            []int64    `sql:"ids"`
	States         []string   `sql:"states"`
	FinishedBefore *time.Time `sql:"finished_before"`
}

func chunkArgsOf(c driver.Chunk) chunkArgs {
	return chunkArgs{IDs: nonNil(c.IDs), States: c.StateNames(), FinishedBefore: optTime(c.FinishedBefore)}
}

var (
	jobSelectLive     = bind[selectArgs]("JobSelectLive")
	jobSelectArchived = bind[selectArgs]("JobSelectArchived")
)

type selectArgs struct {
	filterArgs
	After int64 `sql:"after"`
	Limit int   `sql:"limit"`
}
