package driver

import (
	"context"
	"time"
)

// ArchiveGroup counts the archived jobs finished on one UTC day in one
// state, queue and kind.
type ArchiveGroup struct {
	// Day is the UTC midnight that starts the day of finished_at.
	Day   time.Time
	State JobState
	Queue string
	Kind  string
	Jobs  int64
	// Held counts jobs retention keeps whatever their age: a job that a
	// live job still depends on, or whose idempotency key's window is open
	// (deleting it would leave the key naming no job).
	Held int64
	// Oldest and Newest are the extreme finished_at of the group.
	Oldest, Newest time.Time
	// Bytes is the approximate stored size of the group's rows.
	Bytes int64
}

// ArchiveSummary is the archive as a janitor run reads it.
type ArchiveSummary struct {
	// Groups group the jobs finished before the summary's bound.
	Groups []ArchiveGroup
	// Later counts the jobs finished at or after the bound. Estimated:
	// Later is partly the database's own estimate of its tables' rows
	// (PostgreSQL: the day partitions' rows per page at their last vacuum
	// or analyze, times their pages now), not a count.
	Later     int64
	Estimated bool
}

// ArchivePartition is one day or month partition of the archive
// (PostgreSQL).
type ArchivePartition struct {
	Name string
	// Day is the UTC midnight its range starts at, End the one it ends
	// before: a day later, or a month for a month partition (ArchiveFold).
	Day, End time.Time
	Bytes    int64
	// Detached: left detached by a drop that did not finish; it holds no
	// job the archive shows, and the next drop removes it.
	Detached bool
}

// ArchivedRef names an archived job and what retention judges it by.
type ArchivedRef struct {
	ID         int64
	State      JobState
	Queue      string
	Kind       string
	FinishedAt time.Time
}

// ExpiredParams picks archived jobs finished in [From, To) and before
// Before, in the driver's scan order, that are not held (see
// ArchiveGroup.Held) at Now.
type ExpiredParams struct {
	From, To, Before, Now time.Time
	// After is the last job of the previous page (nil for the first).
	After *ArchivedRef
	Limit int
}

// RangeParams picks archived jobs finished in [From, To), a zero bound
// open, a page at a time.
type RangeParams struct {
	From, To time.Time
	// After is the last job of the previous page (nil for the first).
	After *ArchivedRef
	Limit int
}

// Outcomes of a JanitorRun.
const (
	JanitorOK      = "ok"
	JanitorRefused = "refused"
	JanitorFailed  = "failed"
)

// JanitorRun records one run of the janitor (retention).
type JanitorRun struct {
	ID         int64
	StartedAt  time.Time
	FinishedAt time.Time
	// Runner is the client id of the process that ran it.
	Runner string
	DryRun bool
	Forced bool
	// Outcome is JanitorOK, JanitorRefused (by the safety check) or
	// JanitorFailed; Message says why.
	Outcome string
	Message string
	// Jobs deleted (a dry run: that would go), by state in ByState.
	Jobs    int64
	ByState map[JobState]int64
	// Partitions dropped (or that would be), and the bytes freed.
	Partitions int
	Bytes      int64
	// Vaulted counts jobs stored in the vault before they were deleted.
	Vaulted int64
}

// RetentionStore holds the statements of the janitor. A live job is never
// among what they read or delete: they act on the archive only.
type RetentionStore interface {
	// ArchiveSummary groups the archived jobs finished before until (a UTC
	// midnight) by day, state, queue and kind, Held judged at now, and
	// counts the jobs finished since. Only the jobs it groups are read: a
	// janitor run passes the first day no job of which can expire, so that
	// its cost follows the old days it may delete, not the recent volume.
	//skiplock:read
	ArchiveSummary(ctx context.Context, now, until time.Time) (ArchiveSummary, error)
	// ArchiveCountBefore is ArchiveSummary's count of one group (day,
	// state, queue, kind) restricted to jobs finished before `before`.
	//skiplock:read
	ArchiveCountBefore(ctx context.Context, g ArchiveGroup, before, now time.Time) (ArchiveGroup, error)
	// ArchivePartitions lists the archive's day and month partitions,
	// attached or left detached; none on a database without partitions.
	//skiplock:read
	ArchivePartitions(ctx context.Context) ([]ArchivePartition, error)
	// ArchiveExpired answers up to p.Limit jobs that p picks.
	//skiplock:read
	ArchiveExpired(ctx context.Context, p ExpiredParams) ([]ArchivedRef, error)
	// ArchiveJobs answers the archived jobs among ids, by id.
	//skiplock:read
	ArchiveJobs(ctx context.Context, ids []int64) ([]*Job, error)
	// ArchiveRange answers up to p.Limit archived jobs finished in
	// [p.From, p.To), in the driver's scan order from p.After: a page of an
	// export, one short statement each.
	//skiplock:read
	//skiplock:replica
	ArchiveRange(ctx context.Context, p RangeParams) ([]*Job, error)
	// ArchiveDelete deletes the archived jobs among jobs that are not held
	// at now, each only while it is the version named (the same ID and
	// FinishedAt: a job retried and finished again since is another
	// version, kept), finished in [from, to) (which narrows the search),
	// with their expired idempotency keys and dependency rows, in one short
	// transaction; it answers the ids deleted.
	ArchiveDelete(ctx context.Context, jobs []ArchivedRef, from, to, now time.Time) ([]int64, error)
	// ArchiveDropPartition deletes the expired (at now) idempotency keys and
	// the dependency rows of the jobs in the day partition named, detaches
	// it, then drops it; detaching waits at most a short lock timeout, so
	// that it never queues the archive's writers behind a long reader.
	ArchiveDropPartition(ctx context.Context, name string, now time.Time) error
	// ArchiveFoldMonth merges the day partitions of the UTC month starting
	// at month (over by a day at least) into one month partition, moving
	// no more than maxJobs jobs; a fold it does not make (too many jobs,
	// another under way) answers Skipped. Its jobs are copied without the
	// archive's lock; under it (a short lock timeout, as a drop's) the copy
	// is brought level with the days and swapped in.
	ArchiveFoldMonth(ctx context.Context, month time.Time, maxJobs int64) (ArchiveFold, error)
	// JanitorRunSave records a run (and keeps only the newest runs).
	JanitorRunSave(ctx context.Context, r *JanitorRun) (int64, error)
	// JanitorRunList answers the newest runs first.
	//skiplock:read
	//skiplock:replica
	JanitorRunList(ctx context.Context, limit int) ([]*JanitorRun, error)
}

// ArchiveFold is the merge of a month's day partitions into one month
// partition (PostgreSQL): the archive's reads not by finished_at probe every
// partition, and a year of days kept for ever would make them slow.
type ArchiveFold struct {
	// Name is the month partition's.
	Name string
	// Month is the UTC midnight the month starts at.
	Month time.Time
	// Days counts the day partitions folded, Jobs and Bytes what they held.
	Days  int
	Jobs  int64
	Bytes int64
	// Locked is how long the archive's lock was held (the swap).
	Locked time.Duration
	// Skipped says why the fold was not made ("" when it was).
	Skipped string
}

// JanitorRunsKept is how many runs JanitorRunSave keeps.
const JanitorRunsKept = 1000

// JanitorGroup counts the jobs of one state and queue finished on one UTC
// day that a janitor run deletes (or, dry, would).
type JanitorGroup struct {
	Day   time.Time
	State JobState
	Queue string
	Jobs  int64
	Bytes int64
}

// JanitorReport is what a janitor run did, or a dry run would do.
type JanitorReport struct {
	Run JanitorRun
	// Archived counts the archive's jobs before the run; when
	// ArchivedEstimated, the days that nothing could expire from are
	// counted by the database's estimate (ArchiveSummary.Estimated). Held
	// counts the jobs past their retention kept because they are held
	// (see ArchiveGroup.Held).
	Archived          int64
	ArchivedEstimated bool
	Held              int64
	Groups            []JanitorGroup
	// Partitions are the partitions dropped whole (PostgreSQL).
	Partitions []ArchivePartition
	// Folds are the months whose day partitions were merged (a dry run:
	// would be), PostgreSQL only.
	Folds []ArchiveFold
}
