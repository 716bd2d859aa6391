package pgdriver

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlset"
)

// An operator's actions on jobs named by id, on a schema distributed on
// Citus: the jobs' queues are read first (every shard, without a lock),
// then each queue's jobs change in one statement of its shard, where Citus
// can run what the plain statement asks (citus_queries.sql).
var (
	citusJobQueues        = bind[idsArg]("CitusJobQueues")
	citusArchivedQueues   = bind[idsArg]("CitusArchivedQueues")
	citusJobResumeMany    = bind[queueIDsArgs]("CitusJobResumeMany")
	citusJobUnarchive     = bind[citusIDArgs]("CitusJobUnarchive")
	citusJobUnarchiveMany = bind[queueIDsArgs]("CitusJobUnarchiveMany")
)

// queueIDsArgs are a chunk's jobs of one queue.
type queueIDsArgs struct {
	chunkArgs
	Queue string `sql:"queue"`
}

// citusQueues answers a chunk's jobs grouped by queue, as stmt
// (CitusJobQueues or CitusArchivedQueues) finds them; an id found nowhere
// is left out.
func (e executor) citusQueues(ctx context.Context, stmt sqlset.Stmt[idsArg], c driver.Chunk) ([]queueIDsArgs, error) {
	rows, err := e.q.Query(ctx, stmt.SQL, stmt.Args(idsArg{c.IDs})...)
	if err != nil {
		return nil, err
	}
	var out []queueIDsArgs
	at := map[string]int{}
	var id int64
	var queue string
	_, err = pgx.ForEachRow(rows, []any{&id, &queue}, func() error {
		i, ok := at[queue]
		if !ok {
			i = len(out)
			at[queue] = i
			out = append(out, queueIDsArgs{chunkArgs: chunkArgsOf(c.Only()), Queue: queue})
		}
		out[i].IDs = append(out[i].IDs, id)
		return nil
	})
	return out, err
}

// citusEachQueue runs stmt on each queue's share of a chunk, as found by
// find, and answers the jobs it changed.
func (e executor) citusEachQueue(ctx context.Context, find sqlset.Stmt[idsArg], stmt sqlset.Stmt[queueIDsArgs], c driver.Chunk) ([]*driver.Job, error) {
	groups, err := e.citusQueues(ctx, find, c)
	if err != nil {
		return nil, err
	}
	var out []*driver.Job
	for _, g := range groups {
		jobs, err := scanJobs(e.q.Query(ctx, stmt.SQL, stmt.Args(g)...))
		if err != nil {
			return nil, err
		}
		out = append(out, jobs...)
	}
	return out, nil
}

// citusResume resumes a paused job in its queue's shard; ErrNotFound when
// none was.
func (e executor) citusResume(ctx context.Context, id int64) (*driver.Job, error) {
	jobs, err := e.citusEachQueue(ctx, citusJobQueues, citusJobResumeMany, driver.Chunk{IDs: []int64{id}})
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, driver.ErrNotFound
	}
	return jobs[0], nil
}

// citusRetry puts an archived job back in its queue, in its queue's
// shard; ErrNotFound when none was.
func (e executor) citusRetry(ctx context.Context, id int64) (*driver.Job, error) {
	groups, err := e.citusQueues(ctx, citusArchivedQueues, driver.Chunk{IDs: []int64{id}})
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, driver.ErrNotFound
	}
	return scanOne(e.q.QueryRow(ctx, citusJobUnarchive.SQL, citusJobUnarchive.Args(citusIDArgs{id, groups[0].Queue})...))
}

// citusBulk runs a bulk action on Citus as bulkMany runs it, each queue's
// share of the chunk in its shard.
func (e executor) citusBulk(ctx context.Context, find sqlset.Stmt[idsArg], stmt sqlset.Stmt[queueIDsArgs], c driver.Chunk) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.bulkTx(ctx, func(tx executor) (err error) {
		out, err = tx.citusEachQueue(ctx, find, stmt, c)
		return err
	})
	return out, err
}
