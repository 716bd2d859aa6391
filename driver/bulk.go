package driver

import (
	"context"
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

// Chunk is one batch of a bulk action: the jobs' ids (up to 10,000), and
// what the filter that picked them asks of a job that can change before
// its batch is acted on. The action's statement checks it again as it
// acts, so a job that left the filter meanwhile is left alone, as one in
// a state the action does not act on is. The filter's other fields (kind,
// queue, tenant, creation time, payload, metadata, errors) a picked job
// keeps.
type Chunk struct {
	IDs []int64
	// States, when set, narrows the states the action acts on to these.
	States []JobState
	// FinishedBefore, when set, acts only on archived jobs finished before
	// it (retry, delete): a job retried and finished again since is newer.
	FinishedBefore time.Time
}

// StateNames answers the chunk's states as text, as Filter's.
func (c Chunk) StateNames() []string { return stateNames(c.States) }

// Only answers the chunk of ids with the same conditions.
func (c Chunk) Only(ids ...int64) Chunk {
	c.IDs = ids
	return c
}

// BulkStore holds the statements of bulk actions on many jobs.
type BulkStore interface {
	// JobSelect answers the ids of the jobs p picks, ascending.
	//skiplock:read
	JobSelect(ctx context.Context, p SelectParams) ([]int64, error)
	// JobDeleteArchived removes finished jobs from the archive and answers
	// the ids it removed; a live or unknown id is left alone.
	JobDeleteArchived(ctx context.Context, c Chunk) ([]int64, error)

	// The set-based forms of AdminStore's and StopStore's single actions:
	// each acts on the jobs of a chunk in one transaction, with the single
	// action's statements and rules, and answers the jobs it changed as
	// they are now. An id the action does not apply to (unknown, in another
	// state, or no longer as the chunk asks) is left alone. Running jobs
	// are only marked: the caller tells their processes
	// (Notifier.NotifyCancel).

	// JobCancelMany cancels the jobs as JobCancel: the ones not running at
	// once (answered cancelled; their dependents settled), the running
	// ones asked to cancel (answered running).
	JobCancelMany(ctx context.Context, c Chunk) ([]*Job, error)
	// JobPauseMany pauses the pending, scheduled and waiting jobs as
	// JobPause (answered paused), and asks the running ones not asked to
	// cancel to pause, as JobRequestPause (answered running).
	JobPauseMany(ctx context.Context, c Chunk) ([]*Job, error)
	// JobResumeMany releases the paused jobs as JobResume.
	JobResumeMany(ctx context.Context, c Chunk) ([]*Job, error)
	// JobRetryMany returns the failed and cancelled jobs to pending (waiting
	// while a parent has not finished) as JobRetry; a job whose idempotency
	// key a live job holds stays in the archive.
	JobRetryMany(ctx context.Context, c Chunk) ([]*Job, error)
}

// JobIDs answers the jobs' ids, in their order.
func JobIDs(jobs []*Job) []int64 {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// RetryEach retries the chunk's jobs one at a time (retry is the driver's
// JobRetryMany statement on a chunk of one, in a transaction of its own),
// passing over one whose idempotency key another job took meanwhile: how
// JobRetryMany takes a chunk whose statement met a key held twice.
func RetryEach(c Chunk, retry func(one Chunk) ([]*Job, error), keyHeld func(error) bool) ([]*Job, error) {
	var out []*Job
	for _, id := range c.IDs {
		jobs, err := retry(c.Only(id))
		switch {
		case err == nil:
			out = append(out, jobs...)
		case keyHeld(err):
		default:
			return out, err
		}
	}
	return out, nil
}
