package pgdriver

import (
	"context"
	"errors"
	"slices"

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
	var before any
	if !p.Before.IsZero() {
		before = p.Before
	}
	kinds, queues := p.Kinds, p.Queues
	if kinds == nil {
		kinds = []string{}
	}
	if queues == nil {
		queues = []string{}
	}
	rows, err := e.q.Query(ctx, stmt.SQL, stmt.Args(selectArgs{p.StateNames(), kinds, queues, p.Tenant, before, p.AfterID, p.Limit})...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// JobDeleteArchived removes finished jobs; see driver.BulkStore.
func (e executor) JobDeleteArchived(ctx context.Context, ids []int64) ([]int64, error) {
	rows, err := e.q.Query(ctx, jobDeleteArchived.SQL, jobDeleteArchived.Args(idsArg{ids})...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	slices.Sort(out)
	return slices.Compact(out), err
}

// JobCancelMany cancels a chunk of live jobs; see driver.BulkStore.
func (e executor) JobCancelMany(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		running, err := tx.lockThen(ctx, ids, jobRequestCancelMany)
		if err != nil {
			return err
		}
		cancelled, err := scanJobs(tx.q.Query(ctx, jobArchiveLiveMany.SQL, jobArchiveLiveMany.Args(idsArg{ids})...))
		if err != nil {
			return err
		}
		out = append(cancelled, running...)
		return depgraph.SettleParents(ctx, tx, driver.JobIDs(cancelled))
	})
	return out, err
}

// JobPauseMany pauses a chunk of live jobs; see driver.BulkStore.
func (e executor) JobPauseMany(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		paused, err := tx.lockThen(ctx, ids, jobPauseMany)
		if err != nil {
			return err
		}
		running, err := scanJobs(tx.q.Query(ctx, jobRequestPauseMany.SQL, jobRequestPauseMany.Args(idsArg{ids})...))
		out = append(paused, running...)
		return err
	})
	return out, err
}

// JobResumeMany releases a chunk of paused jobs; see driver.BulkStore.
func (e executor) JobResumeMany(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.inTx(ctx, func(tx executor) (err error) {
		out, err = tx.lockThen(ctx, ids, jobResumeMany)
		return err
	})
	return out, err
}

// JobRetryMany returns a chunk of archived jobs to the queue; see
// driver.BulkStore. A chunk whose statement meets a key held twice (two
// of its jobs share one, or a job inserted meanwhile took it) is taken one
// job at a time, as JobRetry takes it.
func (e executor) JobRetryMany(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	var out []*driver.Job
	err := e.inTx(ctx, func(tx executor) (err error) {
		out, err = scanJobs(tx.q.Query(ctx, jobUnarchiveMany.SQL, jobUnarchiveMany.Args(idsArg{ids})...))
		return err
	})
	if !isUniqueViolation(err) {
		return out, err
	}
	out = out[:0]
	for _, id := range ids {
		var j *driver.Job
		err := e.inTx(ctx, func(tx executor) (err error) {
			j, err = tx.JobRetry(ctx, id)
			return err
		})
		switch {
		case err == nil:
			out = append(out, j)
		case errors.Is(err, driver.ErrWrongState) || errors.Is(err, driver.ErrNotFound):
		default:
			return out, err
		}
	}
	return out, nil
}

// lockThen locks the live jobs among ids in id order, then runs stmt on
// them and answers the jobs it changed.
func (e executor) lockThen(ctx context.Context, ids []int64, stmt sqlset.Stmt[idsArg]) ([]*driver.Job, error) {
	if _, err := e.q.Exec(ctx, jobLockMany.SQL, jobLockMany.Args(idsArg{ids})...); err != nil {
		return nil, err
	}
	return scanJobs(e.q.Query(ctx, stmt.SQL, stmt.Args(idsArg{ids})...))
}

var (
	jobLockMany          = bind[idsArg]("JobLockMany")
	jobRequestCancelMany = bind[idsArg]("JobRequestCancelMany")
	jobArchiveLiveMany   = bind[idsArg]("JobArchiveLiveMany")
	jobPauseMany         = bind[idsArg]("JobPauseMany")
	jobRequestPauseMany  = bind[idsArg]("JobRequestPauseMany")
	jobResumeMany        = bind[idsArg]("JobResumeMany")
	jobUnarchiveMany     = bind[idsArg]("JobUnarchiveMany")
)

var (
	jobSelectLive     = bind[selectArgs]("JobSelectLive")
	jobSelectArchived = bind[selectArgs]("JobSelectArchived")
	jobDeleteArchived = bind[idsArg]("JobDeleteArchived")
)

type selectArgs struct {
	States []string `sql:"states"`
	Kinds  []string `sql:"kinds"`
	Queues []string `sql:"queues"`
	Tenant *string  `sql:"tenant"`
	Before any      `sql:"before"` // a time, or nil for none
	After  int64    `sql:"after"`
	Limit  int      `sql:"limit"`
}
