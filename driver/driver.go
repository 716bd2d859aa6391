package driver

import (
	"context"
	"errors"
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
)

// Driver is a database Skiplock runs on.
type Driver interface {
	Executor
	// Name is "postgres" or "sqlite".
	Name() string
	// Begin starts a transaction of the driver's own.
	Begin(ctx context.Context) (ExecutorTx, error)
	// UnwrapTx wraps a caller's transaction (pgx.Tx for PostgreSQL, *sql.Tx
	// for SQLite) so that inserts join it.
	UnwrapTx(tx any) (Executor, error)
	// Migrator applies the embedded schema migrations.
	Migrator() Migrator
	// Notifier wakes idle workers when jobs are inserted.
	Notifier() Notifier
}

// Executor runs statements, in a transaction or not. The stores group them
// by entity.
type Executor interface {
	JobStore
	BulkStore
	QueueStore
	LeaderStore
	ScheduleStore
	ArchiveStore
	RetentionStore
	TokenStore
	PeriodicStore
	MetricsStore
	StopStore
	ContractStore
}

// ExecutorTx is an Executor inside a transaction.
type ExecutorTx interface {
	Executor
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// JobStore holds the jobs' statements. Every transition of a running job is
// conditional on its holder (HeldJob) and answers ErrLeaseLost otherwise.
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
	// JobCompleteMany finishes held jobs and answers the ids it finished;
	// the others had lost their lease. A job asked to cancel ends cancelled.
	JobCompleteMany(ctx context.Context, jobs []CompleteParams) ([]int64, error)
	// JobComplete finishes one held job and answers it as finished, from
	// the statement that finished it (one statement on PostgreSQL); a job
	// asked to cancel ends cancelled. It answers ErrLeaseLost when the job
	// is not held by p's worker and attempt.
	JobComplete(ctx context.Context, p CompleteParams) (*Job, error)
	JobFail(ctx context.Context, p FailParams) (*Job, error)
	JobSnooze(ctx context.Context, p SnoozeParams) (*Job, error)
	JobProgress(ctx context.Context, p ProgressParams) (*HeartbeatResult, error)
	JobGet(ctx context.Context, id int64) (*Job, error)
	JobList(ctx context.Context, p ListParams) ([]*Job, error)
	// JobCancel cancels a live job: at once unless running; a running job
	// gets cancel_requested and ends cancelled when its worker stops.
	JobCancel(ctx context.Context, id int64) (*Job, error)
	// JobRetry returns a failed or cancelled job to pending with its retry
	// budget reset and its error history kept.
	JobRetry(ctx context.Context, id int64) (*Job, error)
	JobPause(ctx context.Context, id int64) (*Job, error)
	JobResume(ctx context.Context, id int64) (*Job, error)
	// JobRescue handles running jobs whose lease expired before now and
	// not before since (zero: any time). RescueResult.Now is the database's
	// clock that the leases were compared with.
	JobRescue(ctx context.Context, limit int, since time.Time) (RescueResult, error)
	// JobChangedSince answers jobs, live or archived, updated after since,
	// oldest change first (the event feed; the hot table is small).
	JobChangedSince(ctx context.Context, since time.Time, limit int) ([]*Job, error)
	// JobStats counts jobs by state and kind, and jobs finished recently.
	JobStats(ctx context.Context) (*Stats, error)
	// JobActivity counts the jobs finished at or after since, by state and
	// by bucket of the given width (bucket 0 starts at since), and the
	// workers holding running jobs. It reads only recent archive rows and
	// the running jobs, so it stays fast however large the archive grows.
	JobActivity(ctx context.Context, since time.Time, bucket time.Duration) (*Activity, error)
	// JobPromoteScheduled makes scheduled jobs due before now and not before
	// since (zero: any time) pending, and answers the queues that got work
	// and the database's clock that run_at was compared with.
	JobPromoteScheduled(ctx context.Context, limit int, since time.Time) (PromoteResult, error)
}

// Stats are totals over all jobs.
type Stats struct {
	// ByStateKind counts jobs: state → kind → n.
	ByStateKind map[JobState]map[string]int64
	// Finished counts jobs finished in the last minute and hour by state.
	FinishedLastMinute map[JobState]int64
	FinishedLastHour   map[JobState]int64
}

// Activity is what JobActivity counts.
type Activity struct {
	// Finished holds one count per bucket and state that had any job.
	Finished []ActivityCount
	// Running counts running jobs; RunningWorkers the distinct workers
	// holding them.
	Running, RunningWorkers int64
}

// ActivityCount is the jobs of one state finished in one bucket.
type ActivityCount struct {
	Bucket int
	State  JobState
	N      int64
}

// QueueInfo is a queue's settings and counts of its live jobs.
type QueueInfo struct {
	Name             string
	Paused           bool
	Counts           map[JobState]int64
	OldestPendingAge time.Duration
}

// QueueStore holds queue settings (pause) and statistics.
type QueueStore interface {
	QueuePause(ctx context.Context, name string) error
	QueueResume(ctx context.Context, name string) error
	// QueueExists answers whether a queue has settings (it was paused or
	// resumed) or any job, live or archived.
	QueueExists(ctx context.Context, name string) (bool, error)
	// QueueNotify wakes idle workers of the queues; in a transaction the
	// wake-up goes out at commit.
	QueueNotify(ctx context.Context, queues []string) error
	// QueueList answers every queue that has settings or jobs, by name;
	// Counts include archived jobs when withArchive.
	QueueList(ctx context.Context, withArchive bool) ([]QueueInfo, error)
}

// LeaderStore elects one leader per name among processes sharing a database.
type LeaderStore interface {
	// LeaderAttempt makes id the leader for ttl if there is none or it is
	// already id; it answers whether id leads.
	LeaderAttempt(ctx context.Context, name, id string, ttl time.Duration) (bool, error)
	LeaderResign(ctx context.Context, name, id string) error
}

// Schedule is a recurring per-entity schedule.
type Schedule struct {
	Key       string
	Tenant    string
	Kind      string
	Queue     string
	Payload   []byte
	Every     time.Duration
	NextRunAt time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ScheduleStore keeps recurring schedules, which outlive their jobs.
type ScheduleStore interface {
	ScheduleUpsert(ctx context.Context, s *Schedule) (*Schedule, error)
	ScheduleDelete(ctx context.Context, tenant, key string) error
	ScheduleList(ctx context.Context, tenant *string) ([]*Schedule, error)
	// ScheduleDue answers due schedules, locked until the executor's
	// transaction ends, so that one enqueuer takes each.
	ScheduleDue(ctx context.Context, limit int) ([]*Schedule, error)
	ScheduleAdvance(ctx context.Context, tenant, key string, next time.Time) error
}

// PeriodicStore remembers the last tick each periodic (cron) job was
// enqueued for, so that a restarted leader knows which ticks it missed.
type PeriodicStore interface {
	// PeriodicLastTicks answers the last recorded tick of every periodic job.
	PeriodicLastTicks(ctx context.Context) (map[string]time.Time, error)
	// PeriodicAdvance records tick as name's last one unless a later one is
	// recorded already (two leaders in a split brain never move it back).
	PeriodicAdvance(ctx context.Context, name string, tick time.Time) error
}

// ArchiveStore manages the archive of finished jobs, and the hot table.
type ArchiveStore interface {
	// HotTableVacuum vacuums the hot table when it holds more than
	// deadRows dead rows, and answers whether it did (PostgreSQL; a no-op
	// elsewhere). Autovacuum wakes once a minute, too seldom for a table
	// that turns over thousands of rows a second.
	HotTableVacuum(ctx context.Context, deadRows int64) (bool, error)
	// ArchivePrepare readies the archive to take jobs finished up to
	// `until` (daily partitions on PostgreSQL).
	ArchivePrepare(ctx context.Context, until time.Time) error
	// UniqueKeyPrune deletes up to limit window keys that expired by
	// `before` and whose job is not live (finished, or never inserted), and
	// answers how many it deleted. A live job's key stays.
	UniqueKeyPrune(ctx context.Context, before time.Time, limit int) (int, error)
}

// Token is an API token; only the SHA-256 of its secret is stored.
type Token struct {
	ID        int64
	Name      string
	Hash      string
	Role      string
	Tenant    string
	CreatedAt time.Time
}

// TokenStore keeps API tokens.
type TokenStore interface {
	TokenCreate(ctx context.Context, t *Token) (*Token, error)
	// TokenByHash answers ErrNotFound for an unknown hash.
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	TokenList(ctx context.Context) ([]*Token, error)
	TokenDelete(ctx context.Context, id int64) error
	TokenCount(ctx context.Context) (int, error)
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
	// down, sent wake-ups nobody heard. It returns when ctx ends or the
	// connection fails (the caller listens again).
	Listen(ctx context.Context, onInsert func(queue string), onCancel func(id int64)) error
}
