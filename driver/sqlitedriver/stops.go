package sqlitedriver

import (
	"context"
	"database/sql"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// JobRequestPause asks a running job to pause; see driver.StopStore.
func (e executor) JobRequestPause(ctx context.Context, id int64) (*driver.Job, error) {
	_, now, _ := nowArgs()
	return scanOne(e.wquery(ctx, "JobRequestPause", sql.Named("id", id), now))
}

// JobPauseHeld pauses a held job asked to pause; see driver.StopStore.
func (e executor) JobPauseHeld(ctx context.Context, h driver.HeldJob) (*driver.Job, error) {
	_, now, _ := nowArgs()
	j, err := scanOne(e.wquery(ctx, "JobPauseHeld", append(held(h), now)...))
	if err == driver.ErrNotFound {
		return nil, driver.ErrLeaseLost
	}
	return j, err
}

// JobStopRequests answers the cancel and pause requests of running jobs.
func (e executor) JobStopRequests(ctx context.Context, ids []int64) ([]driver.StopRequest, error) {
	return collect(func(s scanner) (driver.StopRequest, error) {
		var r driver.StopRequest
		return r, s.Scan(&r.ID, &r.Cancel, &r.Pause)
	})(e.rquery(ctx, "JobStopRequests", sql.Named("ids", jsonText(ids))))
}

// rescuePaused pauses jobs asked to pause whose lease expired (JobRescue
// runs it first: their workers stopped, or died), their attempt spent.
func (e executor) rescuePaused(ctx context.Context, limit int, since time.Time) (int, error) {
	_, now, nowText := nowArgs()
	ids, err := collect(func(s scanner) (int64, error) {
		var id int64
		return id, s.Scan(&id)
	})(e.wquery(ctx, "JobRescuePaused", sql.Named("limit", limit), sinceArg(since), now, nowText))
	return len(ids), err
}
