package sqlitedriver

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/skiplock/skiplock/driver"
)

// fairSQL holds the fair claim's statements. Like retentionSQL, it starts
// with its first "-- name:" line.
//
//go:embed fair.sql
var fairSQL string

// fairHead is the end of what a fair claim took from one tenant.
type fairHead struct {
	tenant        string
	weight, share int
	filled        bool
	ids           []int64
	// rank, runAt and last are the claim key of the last job taken.
	rank, runAt, last int64
}

// jobClaimFair claims as JobClaim does, shared between the queue's tenants
// (driver.FairShare), in one write transaction: the tenants by a skip scan,
// each tenant's share from its head, the rest of the claim from the tenants
// that filled theirs, merged in Go.
func (e executor) jobClaimFair(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	leaseKinds := p.Kinds
	if p.LeaseKinds != nil {
		leaseKinds = p.LeaseKinds
	}
	var jobs []*driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		tenants, err := tx.fairTenants(ctx, p.Queue)
		if err != nil || len(tenants) == 0 {
			return err
		}
		if len(tenants) == 1 {
			// One tenant has it all: the plain claim, scoped to it.
			one := p
			one.Fair, one.Tenant = nil, &tenants[0]
			jobs, err = tx.JobClaim(ctx, one)
			return err
		}
		heads, err := tx.fairHeads(ctx, p, tenants)
		if err != nil {
			return err
		}
		takes := make([]driver.FairTake, len(heads))
		for i, h := range heads {
			takes[i] = driver.FairTake{Weight: h.weight, IDs: h.ids}
		}
		ids := driver.FairMerge(takes, p.Max, rand.Float64)
		if len(ids) == 0 {
			return nil
		}
		_, now, _ := nowArgs()
		jobs, err = scanJobs(tx.wquery(ctx, "JobClaimFairTake", sql.Named("ids", jsonText(ids)),
			sql.Named("worker", p.WorkerID), sql.Named("leases", jsonText(kindLeases(leaseKinds, p.Leases))),
			sql.Named("default_lease", p.DefaultLease.Microseconds()), now))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim jobs in queue %q: %w", p.Queue, err)
	}
	// RETURNING has no order: put each tenant's claims back in claim order.
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].Key().Before(jobs[k].Key()) })
	return jobs, nil
}

// fairTenants answers the tenants with pending jobs in queue, none while
// it is paused.
func (e executor) fairTenants(ctx context.Context, queue string) ([]string, error) {
	return collect(func(s scanner) (string, error) {
		var t string
		return t, s.Scan(&t)
	})(e.wquery(ctx, "JobClaimFairTenants", sql.Named("queue", queue)))
}

// fairHeads takes each tenant's share of p.Max from its head, then the
// room the others left from the tenants that filled theirs.
func (e executor) fairHeads(ctx context.Context, p driver.ClaimParams, tenants []string) ([]*fairHead, error) {
	heads := make([]*fairHead, len(tenants))
	total := 0
	for i, t := range tenants {
		heads[i] = &fairHead{tenant: t, weight: p.Fair.Weight(t), rank: -1}
		total += heads[i].weight
	}
	room := p.Max
	for _, h := range heads {
		h.share = driver.Share(p.Max, h.weight, total)
		if err := e.fairTake(ctx, p, h, h.share); err != nil {
			return nil, err
		}
		h.filled = len(h.ids) == h.share
		room -= len(h.ids)
	}
	for _, h := range heads {
		if room > 0 && h.filled {
			if err := e.fairTake(ctx, p, h, room); err != nil {
				return nil, err
			}
		}
	}
	return heads, nil
}

// fairTake adds up to n of h's tenant's jobs after those h holds.
func (e executor) fairTake(ctx context.Context, p driver.ClaimParams, h *fairHead, n int) error {
	kinds := p.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	rows, err := e.wquery(ctx, "JobClaimFairHead", sql.Named("queue", p.Queue), sql.Named("tenant", h.tenant),
		sql.Named("kinds_any", len(p.Kinds) == 0), sql.Named("kinds", jsonText(kinds)),
		sql.Named("after_rank", h.rank), sql.Named("after_run_at", h.runAt), sql.Named("after_id", h.last),
		sql.Named("max", n))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&h.last, &h.rank, &h.runAt); err != nil {
			return err
		}
		h.ids = append(h.ids, h.last)
	}
	return rows.Err()
}

// FairIndexEnsure makes the tenant claim index the fair claim's skip scan
// reads; see driver.FairIndexer. The build holds the write lock for as long
// as it reads the live jobs, which is the hot table only.
func (e executor) FairIndexEnsure(ctx context.Context) error {
	_, err := e.w.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS skiplock_jobs_claim_tenant
		ON skiplock_jobs (queue, tenant, priority DESC, run_at, id) WHERE state = 'pending'`)
	if err != nil {
		return fmt.Errorf("tenant claim index: %w", err)
	}
	return nil
}
