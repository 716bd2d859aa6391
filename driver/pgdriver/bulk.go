package pgdriver

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// JobSelect answers the ids of the jobs p picks; see driver.BulkStore.
func (e executor) JobSelect(ctx context.Context, p driver.SelectParams) ([]int64, error) {
	name := "JobSelectLive"
	if p.Archived {
		name = "JobSelectArchived"
	}
	var before any
	if !p.Before.IsZero() {
		before = p.Before
	}
	kinds, queues := p.Kinds, p.Queues
	if kinds == nil {
		kinds = []string{}
	}
	if queues == nil {
		queues = []string{}
	}
	rows, err := e.q.Query(ctx, q(name), p.StateNames(), kinds, queues, p.Tenant, before, p.AfterID, p.Limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// JobDeleteArchived removes finished jobs; see driver.BulkStore.
func (e executor) JobDeleteArchived(ctx context.Context, ids []int64) ([]int64, error) {
	rows, err := e.q.Query(ctx, q("JobDeleteArchived"), ids)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	slices.Sort(out)
	return slices.Compact(out), err
}
