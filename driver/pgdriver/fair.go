package pgdriver

import (
	"context"
	_ "embed"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// fairSQL holds the fair claim (JobClaimFair). Like retentionSQL, it
// starts with its "-- name:" line.
//
//go:embed fair.sql
var fairSQL string

// jobClaimFair claims as JobClaim does, shared between the queue's tenants
// (driver.FairShare), in one statement.
func (e executor) jobClaimFair(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	tenants, weights := p.Fair.Tenants, p.Fair.Weights
	if tenants == nil {
		tenants, weights = []string{}, []int{}
	}
	args := jobClaimFair.Args(fairClaimArgs{newClaimArgs(p), tenants, weights})
	var jobs []*driver.Job
	read := func(rows pgx.Rows, err error) error {
		if jobs, err = scanJobs(rows, err); err != nil {
			return err
		}
		// The update answers the jobs in id order: put each tenant's in
		// claim order.
		slices.SortFunc(jobs, func(a, b *driver.Job) int { return a.Key().Compare(b.Key()) })
		return nil
	}
	return jobs, e.pinned(ctx, claimSettings, jobClaimFair.SQL, args, read)
}

var jobClaimFair = bind[fairClaimArgs]("JobClaimFair")

// fairClaimArgs are a claim's arguments and the weights of the tenants
// that have one, by index (the others weigh 1).
type fairClaimArgs struct {
	claimArgs
	Tenants []string `sql:"tenants"`
	Weights []int    `sql:"weights"`
}
