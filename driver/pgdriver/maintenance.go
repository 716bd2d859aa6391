package pgdriver

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

func (e executor) JobRescue(ctx context.Context, limit int, since time.Time) (driver.RescueResult, error) {
	var res driver.RescueResult
	// The two rescue statements run under the pinned settings (see pinned),
	// unless in a caller's transaction; the settling after them does not.
	pin := func(tx executor, settings string) error {
		if e.inCallersTx() {
			return nil
		}
		// On tx's connection: a second one from the pool would wait forever
		// on a maintenance pool of one.
		settings, err := tx.planSettings(ctx, settings)
		if err != nil {
			return err
		}
		_, err = tx.q.Exec(ctx, settings)
		return err
	}
	err := e.inTx(ctx, func(tx executor) error {
		if err := pin(tx, genericPlan); err != nil {
			return err
		}
		if err := tx.q.QueryRow(ctx, `SELECT now()`).Scan(&res.Now); err != nil {
			return err
		}
		res.Now = res.Now.UTC()
		var err error
		if res.Paused, err = tx.rescuePaused(ctx, limit, since); err != nil {
			return err
		}
		requeue, finals := jobRescueRequeue, []pageStmt{jobRescueFinal}
		citus, err := tx.onCitus(ctx)
		if err != nil {
			return err
		}
		if citus {
			requeue, finals = citusJobRescueRequeue, []pageStmt{citusJobRescueFinal, citusJobRescueExhausted}
		}
		queues, err := collectStrings(tx.q.Query(ctx, requeue.SQL, requeue.Args(pageArgs{limit, since})...))
		if err != nil {
			return err
		}
		res.Requeued = len(queues)
		var finished []int64
		for _, final := range finals {
			rows, err := tx.q.Query(ctx, final.SQL, final.Args(pageArgs{limit, since})...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				var st string
				if err := rows.Scan(&id, &st); err != nil {
					rows.Close()
					return err
				}
				finished = append(finished, id)
				if st == string(driver.StateCancelled) {
					res.Cancelled++
				} else {
					res.Failed++
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		if err := pin(tx, unpinned); err != nil {
			return err
		}
		if citus {
			return nil // no dependencies on Citus (citusRefuses): none to settle
		}
		return depgraph.SettleParents(ctx, tx, finished)
	})
	return res, err
}

// JobPromoteScheduled makes due jobs pending and settles dependencies whose
// parents finished (a safety net for races the eager path cannot see).
func (e executor) JobPromoteScheduled(ctx context.Context, limit int, since time.Time) (driver.PromoteResult, error) {
	var res driver.PromoteResult
	if err := e.q.QueryRow(ctx, `SELECT now()`).Scan(&res.Now); err != nil {
		return res, err
	}
	res.Now = res.Now.UTC()
	var queues []string
	promote := jobPromoteScheduled
	if citus, err := e.onCitus(ctx); err != nil {
		return res, err
	} else if citus {
		promote = citusJobPromoteScheduled
	}
	err := e.pinned(ctx, genericPlan, promote.SQL, promote.Args(pageArgs{limit, since}), func(rows pgx.Rows, err error) error {
		queues, err = collectStrings(rows, err)
		return err
	})
	if err != nil {
		return res, err
	}
	// Without dependencies or waiting jobs (a queue that uses no
	// workflows) there is nothing to settle: one small statement instead of
	// a transaction whose join over the archive's partitions is planned
	// again whenever their statistics change.
	var anyDeps, anyWaiting bool
	err = e.q.QueryRow(ctx, anyDepsOrWaiting).Scan(&anyDeps, &anyWaiting)
	if err == nil && (anyDeps || anyWaiting) {
		var released []string
		released, err = e.settleDeps(ctx, limit)
		queues = append(queues, released...)
	}
	res.Queues = queues
	return res, err
}

// settleDeps settles up to limit dependencies whose parents finished and
// releases the waiting jobs left without any, in one transaction; it
// answers the queues of the released jobs.
func (e executor) settleDeps(ctx context.Context, limit int) ([]string, error) {
	var queues []string
	err := e.inTx(ctx, func(tx executor) error {
		rows, err := tx.q.Query(ctx, depsSettled.SQL, depsSettled.Args(limitArg{limit})...)
		if err != nil {
			return err
		}
		type dep struct {
			child, parent int64
			state         string
		}
		deps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (dep, error) {
			var d dep
			return d, r.Scan(&d.child, &d.parent, &d.state)
		})
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := depgraph.SettleDependent(ctx, tx, d.child, d.parent, driver.JobState(d.state)); err != nil {
				return err
			}
		}
		queues, err = tx.ReleaseWaiting(ctx)
		return err
	})
	return queues, err
}

// anyDepsOrWaiting answers whether any dependency link exists, and whether
// any job is waiting.
// (SELECT 1, not an empty select list: Citus cannot distribute that.)
const anyDepsOrWaiting = `SELECT EXISTS (SELECT 1 FROM skiplock_job_deps), EXISTS (SELECT 1 FROM skiplock_jobs WHERE state = 'waiting')`

// DepsOfParents removes and answers the dependency links to parents.
func (e executor) DepsOfParents(ctx context.Context, parents []int64) ([]driver.DepLink, error) {
	rows, err := e.q.Query(ctx, depsOfParents.SQL, depsOfParents.Args(parentsArg{parents})...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.DepLink, error) {
		var l driver.DepLink
		return l, r.Scan(&l.Child, &l.Parent)
	})
}

func (e executor) DepDelete(ctx context.Context, child, parent int64) error {
	_, err := e.q.Exec(ctx, depDelete.SQL, depDelete.Args(depArgs{child, parent})...)
	return err
}

func (e executor) CancelDependent(ctx context.Context, child int64, reason string) (bool, error) {
	var id int64
	err := e.q.QueryRow(ctx, jobCancelDependent.SQL, jobCancelDependent.Args(cancelDependentArgs{child, reason})...).Scan(&id)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

func (e executor) ArchivedState(ctx context.Context, id int64) (driver.JobState, error) {
	var st string
	err := e.q.QueryRow(ctx, jobArchivedState.SQL, jobArchivedState.Args(idArg{id})...).Scan(&st)
	return driver.JobState(st), err
}

// ReleaseWaiting makes waiting jobs without parents left runnable and wakes
// their queues (inside a transaction, at its commit), as the SQLite driver
// does: released jobs would otherwise wait for the next poll. It wakes the
// queues of jobs another release made runnable first too: this one's
// transaction may hold their rows locked (JobReleaseWaiting).
func (e executor) ReleaseWaiting(ctx context.Context) ([]string, error) {
	if on, err := e.onCitus(ctx); err != nil || on {
		return nil, err // no job waits on Citus, which refuses dependencies
	}
	queues, err := collectStrings(e.q.Query(ctx, q("JobReleaseWaiting")))
	if err != nil || len(queues) == 0 {
		return queues, err
	}
	return queues, e.QueueNotify(ctx, queues)
}

func collectStrings(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

var (
	jobPromoteScheduled = bind[pageArgs]("JobPromoteScheduled")
	depsSettled         = bind[limitArg]("DepsSettled")
	jobRescueRequeue    = bind[pageArgs]("JobRescueRequeue")
	jobRescueFinal      = bind[pageArgs]("JobRescueFinal")
	depsOfParents       = bind[parentsArg]("DepsOfParents")
	depDelete           = bind[depArgs]("DepDelete")
	jobCancelDependent  = bind[cancelDependentArgs]("JobCancelDependent")
)

type parentsArg struct {
	Parents []int64 `sql:"parents"`
}

type depArgs struct {
	JobID    int64 `sql:"job_id"`
	ParentID int64 `sql:"parent_id"`
}

type cancelDependentArgs struct {
	ID     int64  `sql:"id"`
	Reason string `sql:"reason"`
}
