// Package depgraph settles job dependencies when parents finish: a
// completed parent frees its dependents, a failed or cancelled one cancels
// them (and theirs in turn) unless they run on parent failure. The policy is
// here once; each driver supplies the statements (Store).
package depgraph

import (
	"context"
	"fmt"

	"github.com/skiplock/skiplock/driver"
)

// Link is a waiting job and one of its parents.
type Link struct{ Child, Parent int64 }

// Store runs the statements settling needs, inside the caller's transaction.
type Store interface {
	// DepsOfParents removes and answers the links to these parents.
	DepsOfParents(ctx context.Context, parents []int64) ([]Link, error)
	// DepDelete removes one link.
	DepDelete(ctx context.Context, child, parent int64) error
	// ArchivedState answers the state of a finished job.
	ArchivedState(ctx context.Context, id int64) (driver.JobState, error)
	// CancelDependent cancels a waiting or paused child with the reason,
	// unless it runs on parent failure; it answers whether it cancelled.
	CancelDependent(ctx context.Context, child int64, reason string) (bool, error)
	// ReleaseWaiting makes waiting jobs with no links left runnable and
	// answers their queues.
	ReleaseWaiting(ctx context.Context) ([]string, error)
}

// SettleParents settles the dependents of jobs that just finished, and
// theirs in turn when they are cancelled.
func SettleParents(ctx context.Context, s Store, parents []int64) error {
	for len(parents) > 0 {
		links, err := s.DepsOfParents(ctx, parents)
		if err != nil {
			return err
		}
		parents = nil
		for _, l := range links {
			st, err := s.ArchivedState(ctx, l.Parent)
			if err != nil {
				return err
			}
			if st == driver.StateCompleted {
				continue
			}
			cancelled, err := s.CancelDependent(ctx, l.Child, reason(l.Parent, st))
			if err != nil {
				return err
			}
			if cancelled {
				parents = append(parents, l.Child)
			}
		}
		if _, err := s.ReleaseWaiting(ctx); err != nil {
			return err
		}
	}
	return nil
}

// SettleDependent removes one finished parent from a child, cancelling the
// child (and its own dependents) when the parent did not complete.
func SettleDependent(ctx context.Context, s Store, child, parent int64, st driver.JobState) error {
	if err := s.DepDelete(ctx, child, parent); err != nil {
		return err
	}
	if st == driver.StateCompleted {
		return nil
	}
	cancelled, err := s.CancelDependent(ctx, child, reason(parent, st))
	if err != nil || !cancelled {
		return err
	}
	return SettleParents(ctx, s, []int64{child})
}

func reason(parent int64, st driver.JobState) string {
	return fmt.Sprintf("parent job %d %s", parent, st)
}
