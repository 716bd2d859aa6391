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
}

// StateNames answers the states as text, for a statement's parameter.
func (p SelectParams) StateNames() []string {
	out := make([]string, len(p.States))
	for i, s := range p.States {
		out[i] = string(s)
	}
	return out
}
