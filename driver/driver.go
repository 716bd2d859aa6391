package driver

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors a driver maps its database's errors to.
var (
	// ErrNotFound: no job (or queue, schedule) with that id.
	ErrNotFound = errors.New("not found")
	// ErrLeaseLost: the job is no longer held by this worker and attempt.
	ErrLeaseLost = errors.New("lease lost: job is not held by this worker")
	// ErrWrongState: the job's state does not allow the transition.
	ErrWrongState = errors.New("job is in the wrong state for this operation")
	// ErrMissingDependency: depends_on names a job that does not exist.
	ErrMissingDependency = errors.New("depends_on names a job that does not exist")
	// ErrNoListen is what Notifier.Listen answers when the database can
	// carry no LISTEN (a pooler in transaction mode and no direct URL):
	// the caller polls instead of listening again.
	ErrNoListen = errors.New("no connection can LISTEN")
)

// MissingDependencyError is ErrMissingDependency naming the parent.
type MissingDependencyError struct{ ID int64 }

func (e *MissingDependencyError) Error() string {
	return fmt.Sprintf("%v: %d", ErrMissingDependency, e.ID)
}

// Is makes errors.Is(err, ErrMissingDependency) hold.
func (e *MissingDependencyError) Is(target error) bool { return target == ErrMissingDependency }

// Driver is a database Skiplock runs on. It implements the core contract
// (Executor) and, optionally, any of the stores in optional.go; the library
// asks for those with As and answers ErrUnsupported without them.
type Driver interface {
	Executor
	// Name is "postgres" or "sqlite".
	Name() string
	// Begin starts a transaction of the driver's own. Its executor
	// implements the same optional stores as the driver.
	Begin(ctx context.Context) (ExecutorTx, error)
	// UnwrapTx wraps a caller's transaction (pgx.Tx for PostgreSQL, *sql.Tx
	// for SQLite) so that inserts join it.
	UnwrapTx(tx any) (Executor, error)
	// Migrator applies the embedded schema migrations.
	Migrator() Migrator
	// Notifier wakes idle workers when jobs are inserted.
	Notifier() Notifier
}

// Executor is the core queue contract every driver implements: it runs
// statements, in a transaction or not. Fail and snooze are no statements of
// their own: the library runs outcome's policy over HeldStore and
// DependencyStore in a transaction it begins (outcome.FailJob).
type Executor interface {
	JobStore
	HeldStore
	DependencyStore
	LeaderStore
}

// ExecutorTx is an Executor inside a transaction.
type ExecutorTx interface {
	Executor
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// JobStore holds the statements of a job's way through the queue. Every
// transition of a running job is conditional on its holder (HeldJob) and
// answers ErrLeaseLost otherwise.
type JobStore interface {
	// JobInsertMany inserts jobs in order, honouring idempotency keys and
	// dependencies. It answers one result per job.
	JobInsertMany(ctx context.Context, jobs []*InsertParams) ([]InsertResult, error)
	// JobInsertFast bulk-inserts jobs without keys or dependencies (COPY on
	// PostgreSQL) and answers their ids in order.
	JobInsertFast(ctx context.Context, jobs []*InsertParams) ([]int64, error)
	JobClaim(ctx context.Context, p ClaimParams) ([]*Job, error)
	// JobInsertStart inserts one plain job (no idempotency key, no
	// dependencies) and starts it at once for start.WorkerID, as a claim
	// would: running, attempt 1, leased for start.Lease. A job due later,
	// inserted paused, or in a paused queue is inserted as JobInsertMany
	// would insert it; its State tells which happened.
	JobInsertStart(ctx context.Context, job *InsertParams, start StartParams) (*Job, error)
	JobHeartbeat(ctx context.Context, p HeartbeatParams) ([]HeartbeatResult, error)
	// JobCompleteMany finishes held jobs and answers those it finished,
	// from the statement that finished them, in no order; the others had
	// lost their lease. A job asked to cancel ends cancelled. It settles
	// the finished jobs' dependents in the same transaction.
	JobCompleteMany(ctx context.Context, jobs []CompleteParams) ([]CompletedJob, error)
	// JobComplete finishes one held job and answers it as finished, from
	// the statement that finished it (one statement on PostgreSQL); a job
	// asked to cancel ends cancelled. It answers ErrLeaseLost when the job
	// is not held by p's worker and attempt.
	JobComplete(ctx context.Context, p CompleteParams) (*Job, error)
	JobProgress(ctx context.Context, p ProgressParams) (*HeartbeatResult, error)
	//skiplock:read
	JobGet(ctx context.Context, id int64) (*Job, error)
	// JobRescue handles running jobs whose lease expired before now and
	// not before since (zero: any time), and settles the dependents of
	// those it finished. RescueResult.Now is the database's clock that the
	// leases were compared with.
	JobRescue(ctx context.Context, limit int, since time.Time) (RescueResult, error)
	// JobPromoteScheduled makes scheduled jobs due before now and not before
	// since (zero: any time) pending, and answers the queues that got work
	// and the database's clock that run_at was compared with.
	JobPromoteScheduled(ctx context.Context, limit int, since time.Time) (PromoteResult, error)
	// QueueNotify wakes idle workers of the queues; in a transaction the
	// wake-up goes out at commit.
	//skiplock:read
	QueueNotify(ctx context.Context, queues []string) error
}

// HeldStore runs the statements on a held job, fenced on its holder; each
// answers ErrLeaseLost when the job is no longer held. Package outcome
// decides which to run (outcome.Decide), inside one transaction.
type HeldStore interface {
	// LockHeld locks the held job and answers what decides how its attempt
	// ends.
	LockHeld(ctx context.Context, h HeldJob) (HeldState, error)
	// RetryHeld puts the job back for another attempt at `at`, appending
	// entry (nil: none); unspend gives the attempt back (a snooze).
	RetryHeld(ctx context.Context, h HeldJob, at time.Time, entry *AttemptError, unspend bool) (*Job, error)
	// ArchiveHeld finishes the job in state, appending entry (nil: none).
	// Its dependents are the caller's to settle (depgraph.SettleParents).
	ArchiveHeld(ctx context.Context, h HeldJob, state JobState, entry *AttemptError) (*Job, error)
}

// HeldState is what a locked held job brings to the decision of how its
// attempt ends (outcome.Decide).
type HeldState struct {
	Kind                            string
	Attempt, MaxRetries             int
	CancelRequested, PauseRequested bool
}

// DepLink is a waiting job and one of its parents.
type DepLink struct{ Child, Parent int64 }

// DependencyStore runs the statements settling dependencies when parents
// finish, inside the caller's transaction. Package depgraph decides which.
type DependencyStore interface {
	// DepsOfParents removes and answers the links to these parents.
	DepsOfParents(ctx context.Context, parents []int64) ([]DepLink, error)
	// DepDelete removes one link.
	DepDelete(ctx context.Context, child, parent int64) error
	// ArchivedState answers the state of a finished job.
	//skiplock:read
	ArchivedState(ctx context.Context, id int64) (JobState, error)
	// CancelDependent cancels a waiting or paused child with the reason,
	// unless it runs on parent failure; it answers whether it cancelled.
	CancelDependent(ctx context.Context, child int64, reason string) (bool, error)
	// ReleaseWaiting makes waiting jobs with no links left runnable, wakes
	// their queues and answers them.
	ReleaseWaiting(ctx context.Context) ([]string, error)
}

// LeaderStore elects one leader per name among processes sharing a database.
type LeaderStore interface {
	// LeaderAttempt makes id the leader for ttl if there is none or it is
	// already id; it answers whether id leads.
	LeaderAttempt(ctx context.Context, name, id string, ttl time.Duration) (bool, error)
	LeaderResign(ctx context.Context, name, id string) error
}

// InTx runs fn in a transaction of d's, committed when fn succeeds and
// rolled back otherwise.
func InTx(ctx context.Context, d Driver, fn func(tx ExecutorTx) error) error {
	tx, err := d.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}

// Migration is one numbered schema step.
type Migration struct {
	Version int
	Name    string
	Applied *time.Time
}

// Migrator applies embedded, numbered up/down migrations.
type Migrator interface {
	// Up applies pending migrations (all when steps <= 0).
	Up(ctx context.Context, steps int) ([]Migration, error)
	// Down reverts applied migrations, newest first (one when steps <= 0).
	Down(ctx context.Context, steps int) ([]Migration, error)
	Status(ctx context.Context) ([]Migration, error)
}

// Notifier carries wake-ups between producers and idle workers, and
// cancellation requests to the workers running a job.
type Notifier interface {
	// NotifyCancel tells listeners that a running job was asked to cancel.
	NotifyCancel(ctx context.Context, id int64) error
	// Listen delivers notifications until ctx ends; onInsert gets a queue
	// name, onCancel a job id. Once it listens it calls onInsert with ""
	// (every queue): jobs inserted before, or while a failed connection was
	// down, sent wake-ups nobody heard; Client.Start waits for that call.
	// It returns when ctx ends or the connection fails (the caller listens
	// again).
	Listen(ctx context.Context, onInsert func(queue string), onCancel func(id int64)) error
}
