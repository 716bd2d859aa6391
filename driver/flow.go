package driver

import (
	"context"
	"strings"
	"time"
)

// FlowKeys are the flow-control limits a job counts against, computed by
// the library when it is inserted (InsertParams.Flow). A claim with
// ClaimParams.Flow honours them; see docs/flow-control.md.
type FlowKeys struct {
	// ConcurrencyKey, when set, lets at most ConcurrencyLimit jobs with
	// this key run at once, across every process on the database.
	ConcurrencyKey   string
	ConcurrencyLimit int
	// RateKey, when set, lets jobs with this key start at Rate a second on
	// average, and at most Burst at once after a pause.
	RateKey     string
	Rate, Burst float64
}

// FlowKeySep parts a flow key's rule name from its value: rule names never
// hold it.
const FlowKeySep = "\x1f"

// FlowKey is the key of the value v under the rule named rule.
func FlowKey(rule, v string) string { return rule + FlowKeySep + v }

// SplitFlowKey answers a flow key's rule name and value.
func SplitFlowKey(key string) (rule, value string) {
	rule, value, _ = strings.Cut(key, FlowKeySep)
	return rule, value
}

// FlowScanFactor is how many more pending jobs than it may claim a flow
// claim reads before it gives up: the jobs of keys without room are
// skipped, and some of those read may be.
const FlowScanFactor = 2

// FlowUse is the current use of one flow key.
type FlowUse struct {
	Key string
	// Running is how many jobs hold a slot of a concurrency key, of Slots.
	Running, Slots int
	// Tokens is how many starts a rate key allows now, of Burst.
	Tokens, Burst, Rate float64
	// Rated tells a rate key (a token bucket) from a concurrency key.
	Rated bool
	// At is when the use was read (the database's clock).
	At time.Time
}

// FlowStore reads the use of flow keys and drops the idle ones.
type FlowStore interface {
	// FlowUsage answers the use of every flow key.
	//skiplock:read
	FlowUsage(ctx context.Context) ([]FlowUse, error)
	// FlowTag sets the flow keys of live jobs that are not running (a job
	// retried from the archive, which keeps no keys), making their slots
	// and buckets.
	FlowTag(ctx context.Context, ids []int64, keys []*FlowKeys) error
	// FlowSweep reads the next keys that have slots or a bucket, in key
	// order, and drops the slots and bucket of each that is idle: no live
	// job carries it, none of its slots is held, its bucket is full, and
	// none of its jobs started at or after p.Before. A key an insert is
	// making at the same time is never dropped under it.
	FlowSweep(ctx context.Context, p FlowSweepParams) (FlowSwept, error)
}

// FlowSweepParams pick the keys a FlowSweep reads: up to Limit of them,
// after After ("": from the first).
type FlowSweepParams struct {
	After  string
	Before time.Time
	Limit  int
}

// FlowSwept is what a FlowSweep did: it read Read keys, the last of them
// Last, and dropped Dropped. Fewer than the limit read: the keys ran out.
type FlowSwept struct {
	Read    int
	Last    string
	Dropped int
}

// HasFlow reports whether any job of jobs counts against a flow limit.
func HasFlow(jobs []*InsertParams) bool {
	for _, p := range jobs {
		if p.Flow != nil {
			return true
		}
	}
	return false
}

// QueueFlow is a flow rule that applies to a queue's jobs, and its use
// now (QueueInfo.Flow).
type QueueFlow struct {
	Rule, Kind, Key string
	Concurrency     int
	Rate            int
	Per             time.Duration
	// Running counts the jobs that hold a slot of the rule's keys; Keys
	// counts the keys, Busy lists the busiest (by running jobs, then by
	// spent tokens) up to MaxBusyKeys.
	Running int
	Keys    int
	Busy    []FlowKeyUse
}

// FlowKeyUse is one key of a rule: its value (empty for a rule without a
// Key), its running jobs and the tokens it has now.
type FlowKeyUse struct {
	Value   string
	Running int
	Tokens  *float64
}

// MaxBusyKeys bounds QueueFlow.Busy.
const MaxBusyKeys = 20
