package pgdriver

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) JobRescue(ctx context.Context, limit int) (driver.RescueResult, error) {
	var res driver.RescueResult
	err := e.inTx(ctx, func(tx executor) error {
		queues, err := collectStrings(tx.q.Query(ctx, q("JobRescueRequeue"), limit))
		if err != nil {
			return err
		}
		res.Requeued = len(queues)
		rows, err := tx.q.Query(ctx, q("JobRescueFinal"), limit)
		if err != nil {
			return err
		}
		var finished []int64
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
		return tx.settleParents(ctx, finished)
	})
	return res, err
}

// JobPromoteScheduled makes due jobs pending and settles dependencies whose
// parents finished (a safety net for races the eager path cannot see).
func (e executor) JobPromoteScheduled(ctx context.Context, limit int) ([]string, error) {
	queues, err := collectStrings(e.q.Query(ctx, q("JobPromoteScheduled"), limit))
	if err != nil {
		return nil, err
	}
	err = e.inTx(ctx, func(tx executor) error {
		rows, err := tx.q.Query(ctx, q("DepsSettled"), limit)
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
			if err := tx.settleDependent(ctx, d.child, d.parent, driver.JobState(d.state)); err != nil {
				return err
			}
		}
		released, err := tx.releaseWaiting(ctx)
		queues = append(queues, released...)
		return err
	})
	return queues, err
}

// settleParents settles the dependents of jobs that just finished, and
// theirs in turn when they are cancelled.
func (e executor) settleParents(ctx context.Context, parents []int64) error {
	for len(parents) > 0 {
		rows, err := e.q.Query(ctx, q("DepsOfParents"), parents)
		if err != nil {
			return err
		}
		type link struct{ child, parent int64 }
		links, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (link, error) {
			var l link
			return l, r.Scan(&l.child, &l.parent)
		})
		if err != nil {
			return err
		}
		parents = parents[:0]
		for _, l := range links {
			st, err := e.archivedState(ctx, l.parent)
			if err != nil {
				return err
			}
			if st == driver.StateCompleted {
				continue
			}
			cancelled, err := e.cancelDependent(ctx, l.child, l.parent, st)
			if err != nil {
				return err
			}
			if cancelled {
				parents = append(parents, l.child)
			}
		}
		if _, err := e.releaseWaiting(ctx); err != nil {
			return err
		}
	}
	return nil
}

// settleDependent removes one finished parent from a child, cancelling the
// child (and its own dependents) when the parent did not complete.
func (e executor) settleDependent(ctx context.Context, child, parent int64, st driver.JobState) error {
	if _, err := e.q.Exec(ctx, q("DepDelete"), child, parent); err != nil {
		return err
	}
	if st == driver.StateCompleted {
		return nil
	}
	cancelled, err := e.cancelDependent(ctx, child, parent, st)
	if err != nil || !cancelled {
		return err
	}
	return e.settleParents(ctx, []int64{child})
}

func (e executor) cancelDependent(ctx context.Context, child, parent int64, st driver.JobState) (bool, error) {
	msg := fmt.Sprintf("parent job %d %s", parent, st)
	var id int64
	err := e.q.QueryRow(ctx, q("JobCancelDependent"), child, msg).Scan(&id)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

func (e executor) archivedState(ctx context.Context, id int64) (driver.JobState, error) {
	var st string
	err := e.q.QueryRow(ctx, q("JobArchivedState"), id).Scan(&st)
	return driver.JobState(st), err
}

func (e executor) releaseWaiting(ctx context.Context) ([]string, error) {
	return collectStrings(e.q.Query(ctx, q("JobReleaseWaiting")))
}

func collectStrings(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
