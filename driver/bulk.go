package driver

import (
	"context"
	"errors"
	"time"
)

// SelectParams picks jobs for a bulk action, a page at a time by id
// ascending, so that each statement acting on them stays short.
type SelectParams struct {
	// Archived picks finished jobs (the archive) instead of live ones.
	Archived bool
	// States, Kinds and Queues: any of them; empty means any.
	States []JobState
	Kinds  []string
	Queues []string
	// Tenant, when set, picks only that tenant's jobs.
	Tenant *string
	// Before, when set, picks live jobs created before it, or archived
	// jobs finished before it.
	Before time.Time
	// IDs, when set, picks only these jobs.
	IDs []int64
	// Metadata and Payload pick as ListParams's do; ErrorType and
	// ErrorMessage too.
	Metadata, Payload       map[string]any
	ErrorType, ErrorMessage string
	// AfterID is the last id of the previous page (0 for the first).
	AfterID int64
	Limit   int
}

// BulkStore holds the statements of bulk actions on many jobs.
type BulkStore interface {
	// JobSelect answers the ids of the jobs p picks, ascending.
	//skiplock:read
	JobSelect(ctx context.Context, p SelectParams) ([]int64, error)
	// JobDeleteArchived removes finished jobs from the archive and answers
	// the ids it removed; a live or unknown id is left alone.
	JobDeleteArchived(ctx context.Context, ids []int64) ([]int64, error)

	// The set-based forms of AdminStore's and StopStore's single actions:
	// each acts on the jobs among ids (a chunk of a bulk action, up to
	// 10,000) in one transaction, with the single action's statements and
	// rules, and answers the jobs it changed as they are now. An id the
	// action does not apply to (unknown, or in another state) is left
	// alone. Running jobs are only marked: the caller tells their
	// processes (Notifier.NotifyCancel).

	// JobCancelMany cancels the jobs as JobCancel: the ones not running at
	// once (answered cancelled; their dependents settled), the running
	// ones asked to cancel (answered running).
	JobCancelMany(ctx context.Context, ids []int64) ([]*Job, error)
	// JobPauseMany pauses the pending, scheduled and waiting jobs as
	// JobPause (answered paused), and asks the running ones not asked to
	// cancel to pause, as JobRequestPause (answered running).
	JobPauseMany(ctx context.Context, ids []int64) ([]*Job, error)
	// JobResumeMany releases the paused jobs as JobResume.
	JobResumeMany(ctx context.Context, ids []int64) ([]*Job, error)
	// JobRetryMany returns the failed and cancelled jobs to pending (waiting
	// while a parent has not finished) as JobRetry; a job whose idempotency
	// key a live job holds stays in the archive.
	JobRetryMany(ctx context.Context, ids []int64) ([]*Job, error)
}

// JobIDs answers the jobs' ids, in their order.
func JobIDs(jobs []*Job) []int64 {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// RetryEach retries the jobs one at a time (retry is the driver's
// JobRetry, each in a transaction of its own), passing over those it finds
// in another state or gone: how JobRetryMany takes a chunk whose statement
// met an idempotency key held twice.
func RetryEach(ids []int64, retry func(id int64) (*Job, error)) ([]*Job, error) {
	var out []*Job
	for _, id := range ids {
		j, err := retry(id)
		switch {
		case err == nil:
			out = append(out, j)
		case errors.Is(err, ErrWrongState) || errors.Is(err, ErrNotFound):
		default:
			return out, err
		}
	}
	return out, nil
}
