package pgdriver

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skiplock/skiplock/driver"
)

// JobComplete finishes one held job in one statement that answers the
// finished row; see driver.JobStore. Only when the job released waiting
// dependents does a second statement make them runnable.
func (e executor) JobComplete(ctx context.Context, p driver.CompleteParams) (*driver.Job, error) {
	s := newJobScanner()
	var released int64
	s.dest = append(s.dest, &released)
	args := completeHeldArgs{heldArgs(p.HeldJob), nullable(p.Result)}
	queue, citus, err := e.heldQueue(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	sql, values := jobCompleteHeld.SQL, jobCompleteHeld.Args(args)
	if citus {
		sql, values = citusJobCompleteHeld.SQL, citusJobCompleteHeld.Args(citusCompleteArgs{args, queue})
	}
	j, err := s.scan(e.q.QueryRow(ctx, sql, values...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, driver.ErrLeaseLost
	}
	if err != nil {
		return nil, err
	}
	if released > 0 {
		if _, err := e.ReleaseWaiting(ctx); err != nil { // and wakes their queues
			return nil, err
		}
	}
	return j, nil
}

var jobCompleteHeld = bind[completeHeldArgs]("JobCompleteHeld")

// completeHeldArgs finish a held job with Result (nil: NULL).
type completeHeldArgs struct {
	heldArgs
	Result any `sql:"result"`
}

// JobCompleteMany finishes a batch in one statement; the jobs must share a
// worker id (one process flushes its own).
func (e executor) JobCompleteMany(ctx context.Context, jobs []driver.CompleteParams) ([]driver.CompletedJob, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	citus, err := e.onCitus(ctx)
	if err != nil {
		return nil, err
	}
	c, err := completeManyStmt(jobs, citus)
	if err != nil {
		return nil, err
	}
	if err := e.pinned(ctx, genericPlan, c.sql, c.args, c.read); err != nil {
		return nil, err
	}
	if c.released > 0 {
		_, err = e.ReleaseWaiting(ctx) // and wakes their queues
	}
	return c.done, err
}

// completeMany is the statement of a batch completion and what it read:
// the jobs it finished, and how many waiting jobs it released.
type completeMany struct {
	localStmt
	done     []driver.CompletedJob
	released int64
}

// completeManyStmt answers a batch completion's statement: on Citus, when
// the jobs name their queues, one that visits those queues' shards alone.
func completeManyStmt(jobs []driver.CompleteParams, citus bool) (*completeMany, error) {
	for _, c := range jobs {
		if c.WorkerID != jobs[0].WorkerID {
			return nil, fmt.Errorf("complete batch mixes workers %q and %q", jobs[0].WorkerID, c.WorkerID)
		}
	}
	ids, attempts, results := batchArgs(len(jobs), func(i int) (int64, int) { return jobs[i].ID, jobs[i].Attempt },
		func(b []byte, i int) []byte { return append(b, jobs[i].Result...) })
	c := &completeMany{}
	args := completeManyArgs{batchHeldArgs{jobs[0].WorkerID, ids, attempts}, results}
	c.sql, c.args = jobCompleteMany.SQL, jobCompleteMany.Args(args)
	c.read = func(rows pgx.Rows, err error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		var j driver.CompletedJob
		var started pgtype.Timestamptz
		dest := []any{&j.ID, &j.State, &j.Queue, &j.Kind, &j.RunAt, &started, &c.released}
		c.done = make([]driver.CompletedJob, 0, len(jobs))
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			j.StartedAt = started.Time // zero when NULL
			c.done = append(c.done, j)
		}
		return rows.Err()
	}
	if !citus {
		return c, nil
	}
	if queues := batchQueues(len(jobs), func(i int) string { return jobs[i].Queue }); queues != nil {
		c.sql, c.args = citusJobCompleteMany.SQL, citusJobCompleteMany.Args(completeManyQueuesArgs{args, queues})
	}
	return c, nil
}
