package driver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"
)

// ErrUnsupported: the driver does not implement the optional store a call
// needs.
var ErrUnsupported = errors.New("not supported by this driver")

// ExecutorWrapper is an executor that wraps another one (a layer that
// watches or logs its calls): As looks through it, so that a wrapper may
// implement every optional store and still answer only for the ones the
// driver beneath it has.
type ExecutorWrapper interface {
	UnwrapExecutor() Executor
}

// As answers e as the optional store T (AdminStore, StatsStore, …), or an
// error wrapping ErrUnsupported when e, or the executor it wraps, lacks it.
func As[T any](e Executor) (T, error) {
	var zero T
	// The driver beneath every wrapper decides whether T is there; the
	// outermost layer that implements T (a wrapper watching it) answers.
	inner := e
	for w, ok := inner.(ExecutorWrapper); ok; w, ok = inner.(ExecutorWrapper) {
		inner = w.UnwrapExecutor()
	}
	if _, ok := inner.(T); !ok {
		return zero, unsupported[T]()
	}
	for cur := e; ; cur = cur.(ExecutorWrapper).UnwrapExecutor() {
		if t, ok := cur.(T); ok {
			return t, nil
		}
	}
}

// Supports reports whether e implements the optional store T.
func Supports[T any](e Executor) bool {
	_, err := As[T](e)
	return err == nil
}

func unsupported[T any]() error {
	return fmt.Errorf("%w: it has no %s", ErrUnsupported, reflect.TypeFor[T]().Name())
}

// AdminStore holds an operator's actions on single jobs and on queues.
type AdminStore interface {
	// JobList answers jobs, live or archived, newest first.
	//skiplock:read
	//skiplock:replica
	JobList(ctx context.Context, p ListParams) ([]*Job, error)
	// JobCancel cancels a live job: at once unless running; a running job
	// gets cancel_requested and ends cancelled when its worker stops.
	JobCancel(ctx context.Context, id int64) (*Job, error)
	// JobRetry returns a failed or cancelled job to pending (waiting while a
	// parent has not finished) with its retry budget reset and its error
	// history kept.
	JobRetry(ctx context.Context, id int64) (*Job, error)
	JobPause(ctx context.Context, id int64) (*Job, error)
	JobResume(ctx context.Context, id int64) (*Job, error)
	// QueuePause stops claims from a queue; the core's JobClaim honours it.
	QueuePause(ctx context.Context, name string) error
	QueueResume(ctx context.Context, name string) error
	// QueueExists answers whether a queue has settings (it was paused or
	// resumed) or any job, live or archived.
	//skiplock:read
	QueueExists(ctx context.Context, name string) (bool, error)
}

// StatsStore answers what the dashboard, metrics and event feed read.
type StatsStore interface {
	// JobStats counts jobs by state and kind, and jobs finished recently.
	//skiplock:read
	//skiplock:replica
	JobStats(ctx context.Context) (*Stats, error)
	// QueueList answers every queue that has settings or jobs, live or
	// finished, by name; Counts include archived jobs when withArchive. It
	// reads only QueueRecentWindow of the archive without withArchive.
	//skiplock:read
	//skiplock:replica
	QueueList(ctx context.Context, withArchive bool) ([]QueueInfo, error)
	// JobChangedSince answers jobs, live or archived, updated after since,
	// oldest change first (the event feed; the hot table is small).
	//skiplock:read
	JobChangedSince(ctx context.Context, since time.Time, limit int) ([]*Job, error)
	// JobActivity counts the jobs finished at or after since, by state and
	// by bucket of the given width (bucket 0 starts at since), and the
	// workers holding running jobs. It reads only recent archive rows and
	// the running jobs, so it stays fast however large the archive grows.
	//skiplock:read
	//skiplock:replica
	JobActivity(ctx context.Context, since time.Time, bucket time.Duration) (*Activity, error)
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

// Stats are totals over all jobs.
type Stats struct {
	// ByStateKind counts jobs: state → kind → n.
	ByStateKind map[JobState]map[string]int64
	// Finished counts jobs finished in the last minute and hour by state.
	FinishedLastMinute map[JobState]int64
	FinishedLastHour   map[JobState]int64
}

// QueueInfo is a queue's settings and counts of its live jobs.
type QueueInfo struct {
	Name             string
	Paused           bool
	Counts           map[JobState]int64
	OldestPendingAge time.Duration
	// Flow is the flow rules that apply to the queue and their use; the
	// client fills it in (docs/flow-control.md).
	Flow []QueueFlow
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
	//skiplock:read
	//skiplock:replica
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
	//skiplock:read
	PeriodicLastTicks(ctx context.Context) (map[string]time.Time, error)
	// PeriodicAdvance records tick as name's last one unless a later one is
	// recorded already (two leaders in a split brain never move it back).
	PeriodicAdvance(ctx context.Context, name string, tick time.Time) error
}

// ArchiveStore manages the archive of finished jobs.
type ArchiveStore interface {
	// ArchivePrepare readies the archive to take jobs finished up to
	// `until` (daily partitions on PostgreSQL).
	ArchivePrepare(ctx context.Context, until time.Time) error
	// UniqueKeyPrune deletes up to limit window keys that expired by
	// `before` and whose job is not live (finished, or never inserted), and
	// answers how many it deleted. A live job's key stays.
	UniqueKeyPrune(ctx context.Context, before time.Time, limit int) (int, error)
	// JobRestore puts finished jobs kept outside the database (the vault)
	// back with their ids, in one transaction: into the archive as they
	// were, or into the queue as JobRetry would (pending, waiting while a
	// parent is live; attempt counting on, error history kept, budget
	// back), waking the queues. A job whose id the database holds, live
	// or archived, or (into the queue) whose idempotency key a live job
	// holds, is skipped, never overwritten. It answers the ids restored.
	JobRestore(ctx context.Context, jobs []*Job, into RestoreTarget) ([]int64, error)
	// QueueRecordArchived records (as settings, not paused) the queues of
	// the jobs finished at or after since, so that a queue whose every job
	// finished stays in QueueList without reading the whole archive.
	QueueRecordArchived(ctx context.Context, since time.Time) error
}

// QueueRecentWindow is how far back QueueList reads the archive for the
// queues of finished jobs: the queue recorder (QueueRecordArchived) runs
// well within it, so a queue of older jobs is among the settings already.
const QueueRecentWindow = 5 * time.Minute

// RestoreTarget is where JobRestore puts jobs back.
type RestoreTarget string

const (
	RestoreQueue   RestoreTarget = "queue"
	RestoreArchive RestoreTarget = "archive"
)

// Valid reports whether t names a target.
func (t RestoreTarget) Valid() bool { return t == RestoreQueue || t == RestoreArchive }

// HotTableStore keeps the hot table small under churn (PostgreSQL). A
// driver implements it, never an executor of a transaction: the upkeep
// runs on the driver's pool, with what it remembers between runs.
type HotTableStore interface {
	// HotTableVacuum vacuums the hot table when it holds more than
	// deadRows dead rows, and answers whether it did. Autovacuum wakes once a minute, too seldom for a table
	// that turns over thousands of rows a second.
	HotTableVacuum(ctx context.Context, deadRows int64) (bool, error)
	// HotTableRebuild truncates the hot table and writes its live jobs
	// back when the table has grown to many times what its live jobs
	// need. Vacuum cannot shrink a table, nor remove rows that a snapshot
	// held open elsewhere can still see; truncating drops the table's
	// files whatever snapshots are open.
	HotTableRebuild(ctx context.Context, limits RebuildLimits) (Rebuild, error)
	// HotTableSpill keeps new jobs out of a hot table that a transaction
	// open elsewhere keeps from being rebuilt, in spill tables that can be
	// emptied whatever that transaction holds. With open it starts spilling; while spill tables exist it
	// moves on from one that has grown, empties those that have drained,
	// and once the holder has ended takes their jobs back into the hot
	// table and drops them. No rebuild happens while spill tables exist.
	HotTableSpill(ctx context.Context, open bool, limits SpillLimits) (Spill, error)
}

// RebuildLimits say when the hot table is rebuilt.
type RebuildLimits struct {
	// MinBytes is the smallest table, indexes included, worth rebuilding
	// (default 1 MiB).
	MinBytes int64
	// Ratio: the table is rebuilt once it takes Ratio times what its live
	// jobs need (default 8).
	Ratio int64
	// MaxRows: no rebuild while more jobs than this are live (default
	// 100,000): the jobs are copied while the table is locked.
	MaxRows int64
	// HeldBytes: while a snapshot held open elsewhere keeps vacuum from
	// removing anything, the table is rebuilt once it takes this much,
	// whatever Ratio says (default 128 MiB), so that it stays within about
	// twice this.
	HeldBytes int64
	// LockWait is how long the rebuild waits for the table's lock before it
	// gives up until the next try (default 50 ms); claims wait behind it.
	LockWait time.Duration
	// Force rebuilds whatever the table's size (MaxRows still holds).
	Force bool
}

// Rebuild tells what a HotTableRebuild did.
type Rebuild struct {
	// Done: the table was rebuilt; Moved live jobs were copied, and the
	// table with its indexes took BytesBefore, and takes BytesAfter now.
	Done                    bool
	Moved                   int64
	BytesBefore, BytesAfter int64
	// HeldBy names the session whose transaction, open for seconds, holds
	// a lock on the hot table: no rebuild can happen until it ends.
	HeldBy string
	// Refused says why a rebuild the table needed did not happen for good
	// (too many jobs live, a role that does not own the table); empty when
	// it happened, was not needed, or only missed the lock this time.
	Refused string
}

// SpillLimits say when a spill table is left for another.
type SpillLimits struct {
	// Bytes: new jobs move on to another spill table once theirs takes
	// this much with its indexes (default 32 MiB); a spill table is
	// emptied once its live jobs need less than 1/Ratio of what it takes
	// (default 8).
	Bytes int64
	Ratio int64
	// MaxTables is the most spill tables there may be (default 8): a
	// spill table that a transaction has read since it was made cannot be
	// emptied until that transaction ends, and a new one is made instead.
	MaxTables int
	// LockWait is how long emptying a spill table waits for its lock
	// (default 50 ms).
	LockWait time.Duration
}

// Spill tells what a HotTableSpill found and did.
type Spill struct {
	// Active: spill tables exist (Tables of them, Bytes in all with their
	// indexes); Target is the one new jobs go to ("" for the hot table).
	Active bool
	Tables int
	Bytes  int64
	Target string
	// HeldBy names the hot table's holder while spill tables exist.
	HeldBy string
	// Opened, Emptied and Dropped name the spill table made, emptied (its
	// Moved jobs sent to the target) or dropped (its jobs sent back to the
	// hot table) this time.
	Opened, Emptied, Dropped string
	Moved                    int64
	// Refused says why spilling could not start.
	Refused string
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
	//skiplock:read
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	//skiplock:read
	TokenList(ctx context.Context) ([]*Token, error)
	TokenDelete(ctx context.Context, id int64) error
	//skiplock:read
	TokenCount(ctx context.Context) (int, error)
}

// Full is an executor with every optional store, as pgdriver's and
// sqlitedriver's are.
type Full interface {
	Executor
	AdminStore
	BulkStore
	StatsStore
	ArchiveStore
	RetentionStore
	MetricsStore
	StopStore
	ContractStore
	TokenStore
	ScheduleStore
	PeriodicStore
	ProcessStore
	HistoryStore
}

// FullDriver is a Driver with every optional store, as pgdriver and
// sqlitedriver are.
type FullDriver interface {
	Driver
	Full
}

// FairIndexer makes the index that fair claims (ClaimParams.Fair) read to
// find each tenant's head. Only a queue shared fairly needs it and every
// insert pays an entry in it, so no migration makes it: a client with
// Fairness configured calls FairIndexEnsure as it starts. A fair claim is
// right without it, only slower behind a large backlog.
type FairIndexer interface {
	// FairIndexEnsure makes the index when it is missing (or was left
	// unfinished), without stopping inserts and claims meanwhile.
	FairIndexEnsure(ctx context.Context) error
}
