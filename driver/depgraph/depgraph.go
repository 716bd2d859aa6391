// Package depgraph settles job dependencies when parents finish: a
// completed parent frees its dependents, a failed or cancelled one cancels
// them (and theirs in turn) unless they run on parent failure. The policy is
// here once; each driver supplies the statements (driver.DependencyStore).
package depgraph

import (
	"context"
	"fmt"

	"github.com/skiplock/skiplock/driver"
)

// Store runs the statements settling dependencies, inside the caller's
// transaction.
type Store = driver.DependencyStore

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
