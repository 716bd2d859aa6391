package driver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// JobState is where a job is in its life; see docs/jobs.md#states.
type JobState string

const (
	StateScheduled JobState = "scheduled"
	StateWaiting   JobState = "waiting"
	StatePending   JobState = "pending"
	StateRunning   JobState = "running"
	StatePaused    JobState = "paused"
	StateCompleted JobState = "completed"
	StateFailed    JobState = "failed"
	StateCancelled JobState = "cancelled"
)

// AllStates lists every state, live ones first.
var AllStates = []JobState{StateScheduled, StateWaiting, StatePending, StateRunning, StatePaused,
	StateCompleted, StateFailed, StateCancelled}

// Valid reports whether s names a state.
func (s JobState) Valid() bool {
	for _, v := range AllStates {
		if v == s {
			return true
		}
	}
	return false
}

// Finished reports whether a job in state s has left the hot table.
func (s JobState) Finished() bool {
	return s == StateCompleted || s == StateFailed || s == StateCancelled
}

// AttemptError is one failed attempt, kept on the job for good.
type AttemptError struct {
	Attempt   int       `json:"attempt"`
	Type      string    `json:"type"`
	Message   string    `json:"message"`
	At        time.Time `json:"at"`
	Retryable bool      `json:"retryable"`
	Stack     string    `json:"stack,omitempty"`
}

// Job is a job row as stored, live or archived. Optional text fields are
// empty when unset; optional JSON fields are nil when unset.
type Job struct {
	ID              int64           `json:"id"`
	Kind            string          `json:"kind"`
	Op              string          `json:"op"`
	Queue           string          `json:"queue"`
	Tenant          string          `json:"tenant"`
	State           JobState        `json:"state"`
	Priority        int             `json:"priority"`
	Payload         json.RawMessage `json:"payload"`
	Metadata        json.RawMessage `json:"metadata"`
	Tags            []string        `json:"tags"`
	Attempt         int             `json:"attempt"`
	MaxRetries      int             `json:"max_retries"`
	RunAt           time.Time       `json:"run_at"`
	CreatedAt       time.Time       `json:"created_at"`
	StartedAt       *time.Time      `json:"started_at"`
	FinishedAt      *time.Time      `json:"finished_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
	LeaseUntil      *time.Time      `json:"lease_until"`
	WorkerID        string          `json:"worker_id"`
	HeartbeatAt     *time.Time      `json:"heartbeat_at"`
	Progress        int             `json:"progress"`
	ProgressMessage string          `json:"progress_message"`
	Checkpoint      json.RawMessage `json:"checkpoint"`
	Result          json.RawMessage `json:"result"`
	Errors          []AttemptError  `json:"errors"`
	IdempotencyKey  string          `json:"idempotency_key"`
	DependsOn       []int64         `json:"depends_on"`
	WorkflowID      string          `json:"workflow_id"`
	Stage           string          `json:"stage"`
	CancelRequested bool            `json:"cancel_requested"`
	// RunOnParentFailure lets a waiting job run when a parent fails or is
	// cancelled, instead of being cancelled with it.
	RunOnParentFailure bool `json:"run_on_parent_failure"`
	// AttemptBase is the attempt a job had when it was last retried by
	// hand: a retry keeps the attempt number counting (a report of a run
	// before the retry never matches a run after it) and moves MaxRetries
	// up by the attempts spent since the previous one, so that the job
	// has its own budget again (MaxRetries - AttemptBase retries).
	AttemptBase int `json:"attempt_base,omitempty"`
}

// FillEmpty makes nil lists empty, so that a job reads the same from
// every driver (JSON [] rather than null).
func (j *Job) FillEmpty() {
	if j.Errors == nil {
		j.Errors = []AttemptError{}
	}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	if j.DependsOn == nil {
		j.DependsOn = []int64{}
	}
}

// InsertParams is one job to insert; the logic has applied defaults.
type InsertParams struct {
	Kind, Op, Queue, Tenant string
	Priority, MaxRetries    int
	Payload, Metadata       json.RawMessage
	Tags                    []string
	// RunAt zero means now (the database's clock).
	RunAt time.Time
	// IdempotencyKey with UniquePolicy "active" (one live job per key) or
	// "window" (one job per key created within UniqueWindow).
	IdempotencyKey     string
	UniquePolicy       string
	UniqueWindow       time.Duration
	DependsOn          []int64
	RunOnParentFailure bool
	WorkflowID, Stage  string
	// Paused inserts the job in the paused state.
	Paused bool
	// Flow, when set, is the job's flow-control keys (flow.go).
	Flow *FlowKeys
	// Wake asks for the queue's wake-up to workers in other processes to
	// go out with the job, committed with it (one commit, not two). A
	// driver that sends it says so in InsertResult.Woken; otherwise the
	// caller sends it (QueueNotify).
	Wake bool
}

// InsertResult is an inserted job, or the existing one its key matched.
type InsertResult struct {
	Job       *Job
	Duplicate bool
	// Woken: the queue's wake-up went out with the job (InsertParams.Wake).
	Woken bool
}

// StartParams name the worker that starts a job as it is inserted
// (JobInsertStart), and its lease.
type StartParams struct {
	WorkerID string
	Lease    time.Duration
}

// Plain reports whether a job can take JobInsertStart or JobInsertFast: no
// idempotency key, no dependencies.
func (p *InsertParams) Plain() bool { return p.IdempotencyKey == "" && len(p.DependsOn) == 0 }

// ClaimParams asks for up to Max pending jobs of one queue.
type ClaimParams struct {
	Queue    string
	WorkerID string
	Max      int
	// Kinds limits the claim to these kinds; empty means any kind.
	Kinds []string
	// Leases gives a lease per kind (same index as LeaseKinds, else as
	// Kinds); DefaultLease applies to the rest.
	Leases []time.Duration
	// LeaseKinds, when set, names the kinds of Leases apart from Kinds, so
	// that a claim of any kind still gives each kind its own lease.
	LeaseKinds   []string
	DefaultLease time.Duration
	// Tenant, when set, limits the claim to that tenant's jobs.
	Tenant *string
	// After, when set, limits the claim to jobs after this place in claim
	// order. A producer passes where its last claim ended so that the scan
	// skips the index entries of the jobs it claimed, which PostgreSQL keeps
	// until vacuum (and a long transaction elsewhere holds vacuum off).
	After *ClaimKey
	// Flow claims honouring the jobs' flow keys (flow.go): a job whose
	// concurrency key has no free slot or whose rate key has no token is
	// left pending. Without it the claim reads no flow key.
	Flow bool
	// Fair, when set and Flow is not, shares the claim between the queue's tenants (see
	// FairShare); the claim then starts at each tenant's head, not After.
	Fair *FairShare
}

// ClaimKey is a job's place in claim order: priority descending, then run_at,
// then id.
type ClaimKey struct {
	Priority int
	RunAt    time.Time
	ID       int64
}

// Key is the job's place in claim order.
func (j *Job) Key() ClaimKey { return ClaimKey{Priority: j.Priority, RunAt: j.RunAt, ID: j.ID} }

// Before reports whether k is claimed before o.
func (k ClaimKey) Before(o ClaimKey) bool { return k.Compare(o) < 0 }

// Compare answers -1 when k is claimed before o, +1 when after, 0 when they
// are the same place.
func (k ClaimKey) Compare(o ClaimKey) int {
	return cmp.Or(cmp.Compare(o.Priority, k.Priority), k.RunAt.Compare(o.RunAt), cmp.Compare(k.ID, o.ID))
}

// HeldJob names a running job by its holder: the fence of every transition.
type HeldJob struct {
	ID       int64
	Attempt  int
	WorkerID string
	// Queue is the job's queue when the holder knows it, "" when not. It
	// is not part of the fence: on a schema distributed on Citus it names
	// the job's shard, so that the statement visits that shard alone (a
	// wrong one finds no job held there: ErrLeaseLost); elsewhere it is
	// not read.
	Queue string
}

// HeartbeatParams extends the leases of jobs held by one worker.
type HeartbeatParams struct {
	WorkerID string
	IDs      []int64
	Attempts []int
	Leases   []time.Duration
	// Queues, when given, holds each job's queue (same index as IDs); as
	// HeldJob.Queue, it names the jobs' shards on Citus.
	Queues []string
}

// HeartbeatResult is a job whose lease was extended.
type HeartbeatResult struct {
	ID              int64
	LeaseUntil      time.Time
	CancelRequested bool
	PauseRequested  bool
}

// CompleteParams finishes a held job successfully.
type CompleteParams struct {
	HeldJob
	Result json.RawMessage
}

// CompletedJob is a job a batch completion finished, with what the
// history counts it by: its state (completed, or cancelled when it was
// asked to cancel), queue and kind, and the run_at and start of the
// attempt that finished it.
type CompletedJob struct {
	ID        int64
	State     JobState
	Queue     string
	Kind      string
	RunAt     time.Time
	StartedAt time.Time
}

// CompletedIDs answers the ids of done, sorted.
func CompletedIDs(done []CompletedJob) []int64 {
	ids := make([]int64, len(done))
	for i, j := range done {
		ids[i] = j.ID
	}
	slices.Sort(ids)
	return ids
}

// FailParams records a failed attempt of a held job; outcome.Decide says
// how it ends. Error.Retryable asks for a retry (the worker's error is not
// permanent); the entry is recorded with Retryable as decided (asked, and
// retries left). The wait before a retry is Wait, or Waits[i] for a job of
// kind WaitKinds[i] (given by kind so that nothing reads the job first, as
// the leases of ClaimParams are).
type FailParams struct {
	HeldJob
	Error     AttemptError
	Wait      time.Duration
	WaitKinds []string
	Waits     []time.Duration
}

// WaitOf answers the wait before a retry of a job of kind.
func (p *FailParams) WaitOf(kind string) time.Duration {
	for i, k := range p.WaitKinds {
		if k == kind && i < len(p.Waits) {
			return p.Waits[i]
		}
	}
	return p.Wait
}

// SnoozeParams reschedules a held job without spending an attempt.
type SnoozeParams struct {
	HeldJob
	RunAt time.Time
}

// ProgressParams updates what a running job reports about itself. Nil
// fields are left as they are.
type ProgressParams struct {
	HeldJob
	Progress        *int
	ProgressMessage *string
	Checkpoint      json.RawMessage
	// Lease > 0 extends the lease by Lease, or by the job's kind's entry in
	// Leases (same index as LeaseKinds) when it has one.
	Lease      time.Duration
	LeaseKinds []string
	Leases     []time.Duration
}

// ListParams filters a job listing; empty fields match everything. Jobs come
// newest first; BeforeID > 0 continues a listing (cursor).
type ListParams struct {
	States     []JobState
	Kind       string
	Queue      string
	Tenant     *string
	WorkflowID string
	// Tags: jobs that carry every one of these tags.
	Tags []string
	// Metadata: jobs whose metadata has each of these top-level keys with
	// this value (compared as JSON: "5" and 5 differ).
	Metadata map[string]any
	// Payload: jobs whose payload has each of these keys with this value,
	// compared as JSON like Metadata's; a key a.b is the key b of the
	// object under the payload's key a.
	Payload map[string]any
	// WorkerID: jobs last run by this worker.
	WorkerID string
	// ErrorType: jobs with an attempt error of this type (any attempt).
	ErrorType string
	// ErrorMessage: jobs with an attempt error whose message holds this
	// text, letters compared without case (any attempt).
	ErrorMessage string
	// IdempotencyKey: jobs inserted under this key (with Tenant, that
	// tenant's); by index in both tables.
	IdempotencyKey string
	// Created and Finished bound created_at and finished_at: After
	// inclusive, Before exclusive, zero unbounded. A Finished bound lists
	// finished jobs only.
	CreatedAfter, CreatedBefore   time.Time
	FinishedAfter, FinishedBefore time.Time
	BeforeID                      int64
	Limit                         int
}

// FinishedOnly reports whether p lists finished jobs only (a finished_at bound).
func (p *ListParams) FinishedOnly() bool {
	return !p.FinishedAfter.IsZero() || !p.FinishedBefore.IsZero()
}

// Reads answers the tables a listing by p reads: the live jobs unless every
// state it names is finished or it bounds finished_at, the archive unless
// every state it names is live.
func (p *ListParams) Reads() (live, archived bool) {
	live, archived = len(p.States) == 0, len(p.States) == 0
	for _, s := range p.States {
		live = live || !s.Finished()
		archived = archived || s.Finished()
	}
	return live && !p.FinishedOnly(), archived
}

// PageSize answers p.Limit, 100 when it is not set.
func (p *ListParams) PageSize() int {
	if p.Limit <= 0 {
		return 100
	}
	return p.Limit
}

// PromoteResult is what a promotion of due scheduled jobs did.
type PromoteResult struct {
	// Queues has a queue for every job that became pending, repeats included.
	Queues []string
	Now    time.Time
}

// RescueResult counts what the rescuer did.
type RescueResult struct {
	Requeued, Failed, Cancelled int
	// Paused counts jobs asked to pause, which go to paused.
	Paused int
	Now    time.Time
}

// InBatch places err, from job i (0-based) of a batch of n, in the batch.
// A batch of one adds nothing: the caller already names the job it inserts.
func InBatch(err error, i, n int, kind string) error {
	if n <= 1 {
		return err
	}
	return fmt.Errorf("job %d of %d (kind %q): %w", i+1, n, kind, err)
}
