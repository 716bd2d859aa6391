package pgdriver

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Query answers a statement of queries.sql, expanded and its parameters
// numbered, for tests that look at its plan.
func Query(name string) string { return queries.Get(name) }

// QueryParams answers the named parameters of a statement in the order of
// their numbers; nil for a statement that numbers its own.
func QueryParams(name string) []string { return queries.Params(name) }

// UnboundQueries answers the statements with named parameters that no
// package variable binds to its arguments.
func UnboundQueries() []string { return queries.Unbound() }

// GenericPlan is the settings the claim and the completion run under.
const GenericPlan = genericPlan

// FlowTriggersLock is the lock the flow triggers' maker and a spill table's
// opening take (migration 036).
const FlowTriggersLock = `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.skiplock_flow_triggers'))`

// QueryNames answers the name of every statement of queries.sql.
func QueryNames() []string { return queries.Names() }

// ScanTime is the scan target every timestamptz is read through.
func ScanTime(t *time.Time) any { return scanTime(t) }

// MaxTime and MinTime are what 'infinity' and '-infinity' read as.
var MaxTime, MinTime = pgMaxTime, pgMinTime

// FromSecs is seconds from the database as a held Duration.
func FromSecs(s float64) time.Duration { return fromSecs(s) }

// JobListArgs are the parameters JobList runs its statement with.
func JobListArgs(p driver.ListParams) ([]any, error) { return jobListArgs(p) }

// TrustSpillTarget makes d send new plain jobs to table, as if it had just
// read it as the spill target.
func TrustSpillTarget(d *Driver, table string) {
	d.sp.mu.Lock()
	d.sp.target, d.sp.readAt = table, time.Now().Add(time.Hour)
	d.sp.mu.Unlock()
}

// LookAgainAtSpills lets d's next look at its spill tables look at each,
// however recently one was counted or missed its lock.
func LookAgainAtSpills(d *Driver) {
	d.vac.mu.Lock()
	d.vac.notBefore = nil
	d.vac.mu.Unlock()
}

// OnFoldCopied runs fn in every fold after its copy and before it locks
// the archive, until the test ends.
func OnFoldCopied(t interface{ Cleanup(func()) }, fn func()) {
	foldCopied = fn
	t.Cleanup(func() { foldCopied = nil })
}

// EnsurePartition makes the day partition of day, as ArchivePrepare does
// for today's and the next days'.
func EnsurePartition(d *Driver, ctx context.Context, day time.Time) error {
	return d.ensurePartition(ctx, day)
}

// SetPoolWatchInterval makes drivers opened after it look for full pools
// every d; it answers what sets it back.
func SetPoolWatchInterval(d time.Duration) (restore func()) {
	was := poolWatchInterval
	poolWatchInterval = d
	return func() { poolWatchInterval = was }
}

// EmptySpill empties spill table name (drops it with drop) as the upkeep
// does, waiting up to lockWait for its lock.
func EmptySpill(ctx context.Context, d *Driver, name string, drop bool, lockWait time.Duration) (moved int64, done bool, err error) {
	return d.upkeep.spillEmpty(ctx, name, drop, driver.SpillLimits{LockWait: lockWait})
}
