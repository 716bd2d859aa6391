package sqlitedriver

import (
	"context"
	"database/sql"
	"slices"

	"github.com/skiplock/skiplock/driver"
)

// JobSelect answers the ids of the jobs p picks; see driver.BulkStore.
func (e executor) JobSelect(ctx context.Context, p driver.SelectParams) ([]int64, error) {
	name := "JobSelectLive"
	if p.Archived {
		name = "JobSelectArchived"
	}
	var tenant any
	if p.Tenant != nil {
		tenant = *p.Tenant
	}
	return scanIDs(e.rquery(ctx, name,
		sql.Named("states_any", len(p.States) == 0), sql.Named("states", jsonText(p.StateNames())),
		sql.Named("kinds_any", len(p.Kinds) == 0), sql.Named("kinds", jsonText(p.Kinds)),
		sql.Named("queues_any", len(p.Queues) == 0), sql.Named("queues", jsonText(p.Queues)),
		sql.Named("tenant", tenant), sql.Named("before", micros(p.Before)),
		sql.Named("after", p.AfterID), sql.Named("limit", p.Limit)))
}

// JobDeleteArchived removes finished jobs; see driver.BulkStore.
func (e executor) JobDeleteArchived(ctx context.Context, ids []int64) ([]int64, error) {
	out, err := scanIDs(e.wquery(ctx, "JobDeleteArchived", sql.Named("ids", jsonText(ids))))
	slices.Sort(out)
	return out, err
}

func scanIDs(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
