package pgdriver

import (
	"context"
	_ "embed"
	"fmt"
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

// fairIndex is the tenant claim index that the fair claim's skip scan reads.
const fairIndex = "skiplock_jobs_claim_tenant"

// FairIndexEnsure makes the tenant claim index with CREATE INDEX
// CONCURRENTLY, after dropping one an interrupted build left invalid; see
// driver.FairIndexer. On a connection of its own: a concurrent build cannot
// run in a transaction.
func (e executor) FairIndexEnsure(ctx context.Context) error {
	var valid *bool
	if err := e.q.QueryRow(ctx, `SELECT (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1))`,
		fairIndex).Scan(&valid); err != nil {
		return fmt.Errorf("tenant claim index: %w", err)
	}
	if valid != nil && *valid {
		return nil
	}
	if valid != nil {
		if _, err := e.q.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+fairIndex); err != nil {
			return fmt.Errorf("tenant claim index: drop the unfinished one: %w", err)
		}
	}
	if _, err := e.q.Exec(ctx, "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+fairIndex+
		" ON skiplock_jobs (queue, tenant, (10 - priority), run_at, id) WHERE state = 'pending'"); err != nil {
		return fmt.Errorf("tenant claim index: %w", err)
	}
	return nil
}
