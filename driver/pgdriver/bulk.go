package pgdriver

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// JobSelect answers the ids of the jobs p picks; see driver.BulkStore.
func (e executor) JobSelect(ctx context.Context, p driver.SelectParams) ([]int64, error) {
	stmt := jobSelectLive
	if p.Archived {
		stmt = jobSelectArchived
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
	rows, err := e.q.Query(ctx, stmt.SQL, stmt.Args(selectArgs{p.StateNames(), kinds, queues, p.Tenant, before, p.AfterID, p.Limit})...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// JobDeleteArchived removes finished jobs; see driver.BulkStore.
func (e executor) JobDeleteArchived(ctx context.Context, ids []int64) ([]int64, error) {
	rows, err := e.q.Query(ctx, jobDeleteArchived.SQL, jobDeleteArchived.Args(idsArg{ids})...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	slices.Sort(out)
	return slices.Compact(out), err
}

var (
	jobSelectLive     = bind[selectArgs]("JobSelectLive")
	jobSelectArchived = bind[selectArgs]("JobSelectArchived")
	jobDeleteArchived = bind[idsArg]("JobDeleteArchived")
)

type selectArgs struct {
	States []string `sql:"states"`
	Kinds  []string `sql:"kinds"`
	Queues []string `sql:"queues"`
	Tenant *string  `sql:"tenant"`
	Before any      `sql:"before"` // a time, or nil for none
	After  int64    `sql:"after"`
	Limit  int      `sql:"limit"`
}
