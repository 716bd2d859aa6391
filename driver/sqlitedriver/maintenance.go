package sqlitedriver

import (
	"context"
	"database/sql"
	"math"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

func (e executor) JobRescue(ctx context.Context, limit int, since time.Time) (driver.RescueResult, error) {
	var res driver.RescueResult
	var queues []string
	err := e.inTx(ctx, func(tx executor) error {
		at, now, nowText := nowArgs()
		res.Now = fromMicros(at)
		after := sinceArg(since)
		var err error
		if res.Paused, err = tx.rescuePaused(ctx, limit, since); err != nil {
			return err
		}
		queues, err = collect(scanString)(tx.wquery(ctx, "JobRescueRequeue", sql.Named("limit", limit), after, now, nowText))
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
		})(tx.wquery(ctx, "JobRescueFinal", sql.Named("limit", limit), after, now, nowText))
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
		return depgraph.SettleParents(ctx, tx, finished)
	})
	if err == nil {
		e.notify(distinct(queues))
	}
	return res, err
}

// JobPromoteScheduled makes due jobs pending and settles dependencies whose
// parents finished (a safety net; the eager path settles most at once).
func (e executor) JobPromoteScheduled(ctx context.Context, limit int, since time.Time) (driver.PromoteResult, error) {
	var res driver.PromoteResult
	var queues []string
	err := e.inTx(ctx, func(tx executor) error {
		at, now, _ := nowArgs()
		res.Now = fromMicros(at)
		var err error
		queues, err = collect(scanString)(tx.wquery(ctx, "JobPromoteScheduled", sql.Named("limit", limit),
			sinceArg(since), now))
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
			if err := depgraph.SettleDependent(ctx, tx, d.child, d.parent, driver.JobState(d.state)); err != nil {
				return err
			}
		}
		released, err := tx.ReleaseWaiting(ctx)
		queues = append(queues, released...)
		return err
	})
	res.Queues = queues
	return res, err
}

// sinceArg is @since in µs; zero is before any time.
func sinceArg(since time.Time) sql.NamedArg {
	if since.IsZero() {
		return sql.Named("since", int64(math.MinInt64))
	}
	return sql.Named("since", since.UnixMicro())
}

// DepsOfParents removes and answers the dependency links to parents.
func (e executor) DepsOfParents(ctx context.Context, parents []int64) ([]driver.DepLink, error) {
	return collect(func(s scanner) (driver.DepLink, error) {
		var l driver.DepLink
		return l, s.Scan(&l.Child, &l.Parent)
	})(e.wquery(ctx, "DepsOfParents", sql.Named("ids", jsonText(parents))))
}

func (e executor) DepDelete(ctx context.Context, child, parent int64) error {
	_, err := e.wexec(ctx, "DepDelete", sql.Named("job", child), sql.Named("parent", parent))
	return err
}

func (e executor) CancelDependent(ctx context.Context, child int64, reason string) (bool, error) {
	_, now, nowText := nowArgs()
	ids, err := collect(scanInt64)(e.wquery(ctx, "JobCancelDependent", sql.Named("id", child),
		sql.Named("message", reason), now, nowText))
	if err != nil || len(ids) == 0 {
		return false, err
	}
	_, err = e.wexec(ctx, "JobDelete", sql.Named("id", child))
	return err == nil, err
}

func (e executor) ArchivedState(ctx context.Context, id int64) (driver.JobState, error) {
	var st string
	err := e.w.QueryRowContext(ctx, q("JobArchivedState"), named("JobArchivedState", sql.Named("id", id))...).Scan(&st)
	return driver.JobState(st), err
}

// ReleaseWaiting makes waiting jobs without parents left runnable and wakes
// their queues.
func (e executor) ReleaseWaiting(ctx context.Context) ([]string, error) {
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
