package pgdriver

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// JobRequestPause asks a running job to pause; see driver.StopStore.
func (e executor) JobRequestPause(ctx context.Context, id int64) (*driver.Job, error) {
	return scanOne(e.q.QueryRow(ctx, jobRequestPause.SQL, jobRequestPause.Args(idArg{id})...))
}

// JobPauseHeld pauses a held job asked to pause; see driver.StopStore.
func (e executor) JobPauseHeld(ctx context.Context, h driver.HeldJob) (*driver.Job, error) {
	queue, citus, err := e.heldQueue(ctx, h)
	if err != nil {
		return nil, err
	}
	sql, values := jobPauseHeld.SQL, jobPauseHeld.Args(heldArgs(h))
	if citus {
		sql, values = citusJobPauseHeld.SQL, citusJobPauseHeld.Args(citusHeldArgs{heldArgs(h), queue})
	}
	j, err := scanOne(e.q.QueryRow(ctx, sql, values...))
	if err == driver.ErrNotFound {
		return nil, driver.ErrLeaseLost
	}
	return j, err
}

// JobStopRequests answers the cancel and pause requests of running jobs.
func (e executor) JobStopRequests(ctx context.Context, ids []int64) ([]driver.StopRequest, error) {
	rows, err := e.q.Query(ctx, jobStopRequests.SQL, jobStopRequests.Args(idsArg{ids})...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []driver.StopRequest
	for rows.Next() {
		var r driver.StopRequest
		if err := rows.Scan(&r.ID, &r.Cancel, &r.Pause); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// rescuePaused pauses jobs asked to pause whose lease expired (JobRescue
// runs it first: their workers stopped, or died).
func (e executor) rescuePaused(ctx context.Context, limit int, since time.Time) (int, error) {
	stmt := jobRescuePaused
	if citus, err := e.onCitus(ctx); err != nil {
		return 0, err
	} else if citus {
		stmt = citusJobRescuePaused
	}
	rows, err := e.q.Query(ctx, stmt.SQL, stmt.Args(pageArgs{limit, since})...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

var (
	jobRequestPause = bind[idArg]("JobRequestPause")
	jobPauseHeld    = bind[heldArgs]("JobPauseHeld")
	jobStopRequests = bind[idsArg]("JobStopRequests")
	jobRescuePaused = bind[pageArgs]("JobRescuePaused")
)
