package sqlitedriver

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) JobRescue(ctx context.Context, limit int) (driver.RescueResult, error) {
	var res driver.RescueResult
	var queues []string
	err := e.inTx(ctx, func(tx executor) error {
		_, now, nowText := nowArgs()
		var err error
		queues, err = collect(scanString)(tx.wquery(ctx, "JobRescueRequeue", sql.Named("limit", limit), now, nowText))
		if err != nil {
			return err
		}
		res.Requeued = len(queues)
		type row struct {
			id int64
			st string
		}
		rows, err := collect(func(s scanner) (row, error) {
			var r row
			return r, s.Scan(&r.id, &r.st)
		})(tx.wquery(ctx, "JobRescueFinal", sql.Named("limit", limit), now, nowText))
		if err != nil || len(rows) == 0 {
			return err
		}
		finished := make([]int64, len(rows))
		for i, r := range rows {
			finished[i] = r.id
			if r.st == string(driver.StateCancelled) {
				res.Cancelled++
			} else {
				res.Failed++
			}
		}
		if _, err := tx.wexec(ctx, "JobDeleteMany", sql.Named("ids", jsonText(finished))); err != nil {
			return err
		}
		return tx.settleParents(ctx, finished)
	})
	if err == nil {
		e.notify(distinct(queues))
	}
	return res, err
}

// JobPromoteScheduled makes due jobs pending and settles dependencies whose
// parents finished (a safety net; the eager path settles most at once).
func (e executor) JobPromoteScheduled(ctx context.Context, limit int) ([]string, error) {
	var queues []string
	err := e.inTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		var err error
		queues, err = collect(scanString)(tx.wquery(ctx, "JobPromoteScheduled", sql.Named("limit", limit), now))
		if err != nil {
			return err
		}
		type dep struct {
			child, parent int64
			state         string
		}
		deps, err := collect(func(s scanner) (dep, error) {
			var d dep
			return d, s.Scan(&d.child, &d.parent, &d.state)
		})(tx.wquery(ctx, "DepsSettled", sql.Named("limit", limit)))
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
		type link struct{ child, parent int64 }
		links, err := collect(func(s scanner) (link, error) {
			var l link
			return l, s.Scan(&l.child, &l.parent)
		})(e.wquery(ctx, "DepsOfParents", sql.Named("ids", jsonText(parents))))
		if err != nil {
			return err
		}
		parents = parents[:0:0]
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
	if _, err := e.wexec(ctx, "DepDelete", sql.Named("job", child), sql.Named("parent", parent)); err != nil {
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
	_, now, nowText := nowArgs()
	ids, err := collect(scanInt64)(e.wquery(ctx, "JobCancelDependent", sql.Named("id", child),
		sql.Named("message", fmt.Sprintf("parent job %d %s", parent, st)), now, nowText))
	if err != nil || len(ids) == 0 {
		return false, err
	}
	_, err = e.wexec(ctx, "JobDelete", sql.Named("id", child))
	return err == nil, err
}

func (e executor) archivedState(ctx context.Context, id int64) (driver.JobState, error) {
	var st string
	err := e.w.QueryRowContext(ctx, q("JobArchivedState"), sql.Named("id", id)).Scan(&st)
	return driver.JobState(st), err
}

// releaseWaiting makes waiting jobs without parents left runnable and wakes
// their queues.
func (e executor) releaseWaiting(ctx context.Context) ([]string, error) {
	_, now, _ := nowArgs()
	queues, err := collect(scanString)(e.wquery(ctx, "JobReleaseWaiting", now))
	if err == nil {
		e.notify(distinct(queues))
	}
	return queues, err
}

func distinct(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
