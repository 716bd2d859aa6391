package pgdriver

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

func (e executor) JobList(ctx context.Context, p driver.ListParams) ([]*driver.Job, error) {
	args, err := jobListArgs(p)
	if err != nil {
		return nil, err
	}
	// Unprepared (an unnamed statement, planned for its arguments each time),
	// described once per connection: safe behind a pooler in transaction mode.
	return scanJobs(e.q.Query(ctx, jobList.SQL, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...))
}

// jobListArgs are the parameters of JobList for p, in their numbers' order.
func jobListArgs(p driver.ListParams) ([]any, error) {
	live, archived := p.Reads()
	limit := p.PageSize()
	f, err := jobFilterArgs(p.Filter())
	if err != nil {
		return nil, err
	}
	return jobList.Args(listArgs{filterArgs: f, Live: live, Archived: archived, BeforeID: p.BeforeID, Limit: limit,
		ByTime: p.FinishedOnly() || !p.CreatedAfter.IsZero() || !p.CreatedBefore.IsZero()}), nil
}

// jobFilterArgs are the parameters of the JobFilter fragment for f.
func jobFilterArgs(f driver.Filter) (filterArgs, error) {
	meta, payload, err := f.Contains()
	if err != nil {
		return filterArgs{}, err
	}
	return filterArgs{States: f.StateNames(), Kinds: nonNil(f.Kinds), Queues: nonNil(f.Queues), Tenant: f.Tenant,
		IDs: nonNil(f.IDs), WorkflowID: f.WorkflowID, Tags: nonNil(f.Tags), Metadata: meta, Payload: payload,
		WorkerID: f.WorkerID, IdempotencyKey: f.IdempotencyKey, ErrorType: f.ErrorType, ErrorMessage: f.ErrorMessage,
		CreatedAfter: optTime(f.CreatedAfter), CreatedBefore: optTime(f.CreatedBefore),
		FinishedAfter: optTime(f.FinishedAfter), FinishedBefore: optTime(f.FinishedBefore)}, nil
}

// nonNil answers an empty list for nil: a NULL array would match no job.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// optTime answers nil for the zero time (no bound).
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// JobCancel cancels a live job; see driver.JobStore.
func (e executor) JobCancel(ctx context.Context, id int64) (*driver.Job, error) {
	var out *driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		state, err := tx.liveState(ctx, id)
		if err != nil {
			return err
		}
		if state == driver.StateRunning {
			out, err = scanOne(tx.q.QueryRow(ctx, jobRequestCancel.SQL, jobRequestCancel.Args(idArg{id})...))
			return err
		}
		out, err = scanOne(tx.q.QueryRow(ctx, jobArchiveLive.SQL, jobArchiveLive.Args(archiveLiveArgs{id, "[]"})...))
		if err != nil {
			return err
		}
		return depgraph.SettleParents(ctx, tx, []int64{id})
	})
	return out, err
}

// liveState locks a live job and answers its state; a finished job is
// ErrWrongState, an unknown one ErrNotFound.
func (e executor) liveState(ctx context.Context, id int64) (driver.JobState, error) {
	var st string
	citus, err := e.onCitus(ctx)
	if err != nil {
		return "", err
	}
	if citus {
		// The row is locked in its queue's shard (citus.go).
		var queue string
		if queue, err = e.jobQueue(ctx, id); err != nil {
			return "", err
		}
		err = e.q.QueryRow(ctx, citusJobLiveForUpdate.SQL, citusJobLiveForUpdate.Args(citusIDArgs{id, queue})...).Scan(&st)
	} else {
		err = e.q.QueryRow(ctx, jobLiveForUpdate.SQL, jobLiveForUpdate.Args(idArg{id})...).Scan(&st)
	}
	if err == nil {
		return driver.JobState(st), nil
	}
	if err != pgx.ErrNoRows {
		return "", err
	}
	err = e.q.QueryRow(ctx, jobArchivedState.SQL, jobArchivedState.Args(idArg{id})...).Scan(&st)
	if err == pgx.ErrNoRows {
		return "", driver.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	return driver.JobState(st), fmt.Errorf("%w: job %d is %s", driver.ErrWrongState, id, st)
}

func (e executor) JobRetry(ctx context.Context, id int64) (*driver.Job, error) {
	retry := func() (*driver.Job, error) {
		return scanOne(e.q.QueryRow(ctx, jobUnarchive.SQL, jobUnarchive.Args(idArg{id})...))
	}
	if on, err := e.onCitus(ctx); err != nil {
		return nil, err
	} else if on {
		retry = func() (*driver.Job, error) { return e.citusRetry(ctx, id) }
	}
	j, err := retry()
	if err == driver.ErrNotFound {
		return nil, e.explainState(ctx, id, "retry")
	}
	if isUniqueViolation(err) {
		return nil, fmt.Errorf("%w: a live job holds its idempotency key", driver.ErrWrongState)
	}
	return j, err
}

func (e executor) JobPause(ctx context.Context, id int64) (*driver.Job, error) {
	j, err := scanOne(e.q.QueryRow(ctx, jobPause.SQL, jobPause.Args(idArg{id})...))
	if err == driver.ErrNotFound {
		return nil, e.explainState(ctx, id, "pause")
	}
	return j, err
}

func (e executor) JobResume(ctx context.Context, id int64) (*driver.Job, error) {
	resume := func() (*driver.Job, error) {
		return scanOne(e.q.QueryRow(ctx, jobResume.SQL, jobResume.Args(idArg{id})...))
	}
	if on, err := e.onCitus(ctx); err != nil {
		return nil, err
	} else if on {
		resume = func() (*driver.Job, error) { return e.citusResume(ctx, id) }
	}
	j, err := resume()
	if err == driver.ErrNotFound {
		return nil, e.explainState(ctx, id, "resume")
	}
	return j, err
}

// explainState turns "no row changed" into ErrNotFound or ErrWrongState.
func (e executor) explainState(ctx context.Context, id int64, op string) error {
	j, err := e.JobGet(ctx, id)
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: cannot %s job %d in state %s", driver.ErrWrongState, op, id, j.State)
}

var (
	jobList          = bind[listArgs]("JobList")
	jobRequestCancel = bind[idArg]("JobRequestCancel")
	jobArchiveLive   = bind[archiveLiveArgs]("JobArchiveLive")
	jobLiveForUpdate = bind[idArg]("JobLiveForUpdate")
	jobArchivedState = bind[idArg]("JobArchivedState")
	jobUnarchive     = bind[idArg]("JobUnarchive")
	jobPause         = bind[idArg]("JobPause")
	jobResume        = bind[idArg]("JobResume")
)

type archiveLiveArgs struct {
	ID     int64  `sql:"id"`
	Errors string `sql:"errors"`
}

type listArgs struct {
	filterArgs
	Live     bool  `sql:"live"`
	Archived bool  `sql:"archived"`
	BeforeID int64 `sql:"before_id"`
	Limit    int   `sql:"limit"`
	// ByTime reads the archive by a time bound (see JobList).
	ByTime bool `sql:"by_time"`
}

// filterArgs are the parameters of the JobFilter fragment, which every
// listing and bulk selection reads.
type filterArgs struct {
	States         []string   `sql:"states"`
	Kinds          []string   `sql:"kinds"`
	Queues         []string   `sql:"queues"`
	Tenant         *string    `sql:"tenant"`
	IDs            []int64    `sql:"ids"`
	WorkflowID     string     `sql:"workflow_id"`
	Tags           []string   `sql:"tags"`
	Metadata       []byte     `sql:"metadata"`
	Payload        []byte     `sql:"payload"`
	WorkerID       string     `sql:"worker_id"`
	IdempotencyKey string     `sql:"idempotency_key"`
	ErrorType      string     `sql:"error_type"`
	ErrorMessage   string     `sql:"error_message"`
	CreatedAfter   *time.Time `sql:"created_after"`
	CreatedBefore  *time.Time `sql:"created_before"`
	FinishedAfter  *time.Time `sql:"finished_after"`
	FinishedBefore *time.Time `sql:"finished_before"`
}
