package pgdriver

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

func scanSchedule(r pgx.CollectableRow) (*driver.Schedule, error) {
	var s driver.Schedule
	var every float64
	err := r.Scan(&s.Tenant, &s.Key, &s.Kind, &s.Queue, &s.Payload, &every, scanTime(&s.NextRunAt), scanTime(&s.CreatedAt),
		scanTime(&s.UpdatedAt))
	s.Every = fromSecs(every)
	return &s, err
}

func (e executor) ScheduleUpsert(ctx context.Context, s *driver.Schedule) (*driver.Schedule, error) {
	var next *time.Time
	if !s.NextRunAt.IsZero() {
		next = &s.NextRunAt
	}
	rows, err := e.q.Query(ctx, scheduleUpsert.SQL, scheduleUpsert.Args(scheduleArgs{s.Tenant, s.Key, s.Kind, s.Queue,
		jsonOr(s.Payload, "{}"), secs(s.Every), next})...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectExactlyOneRow(rows, scanSchedule)
}

func (e executor) ScheduleDelete(ctx context.Context, tenant, key string) error {
	tag, err := e.q.Exec(ctx, scheduleDelete.SQL, scheduleDelete.Args(keyArgs{tenant, key})...)
	if err == nil && tag.RowsAffected() == 0 {
		return driver.ErrNotFound
	}
	return err
}

func (e executor) ScheduleList(ctx context.Context, tenant *string) ([]*driver.Schedule, error) {
	rows, err := e.q.Query(ctx, scheduleList.SQL, scheduleList.Args(tenantArg{tenant})...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanSchedule)
}

func (e executor) ScheduleDue(ctx context.Context, limit int) ([]*driver.Schedule, error) {
	rows, err := e.q.Query(ctx, scheduleDue.SQL, scheduleDue.Args(limitArg{limit})...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanSchedule)
}

func (e executor) ScheduleAdvance(ctx context.Context, tenant, key string, next time.Time) error {
	_, err := e.q.Exec(ctx, scheduleAdvance.SQL, scheduleAdvance.Args(advanceArgs{keyArgs{tenant, key}, next})...)
	return err
}

var (
	scheduleUpsert  = bind[scheduleArgs]("ScheduleUpsert")
	scheduleDelete  = bind[keyArgs]("ScheduleDelete")
	scheduleList    = bind[tenantArg]("ScheduleList")
	scheduleDue     = bind[limitArg]("ScheduleDue")
	scheduleAdvance = bind[advanceArgs]("ScheduleAdvance")
)

type scheduleArgs struct {
	Tenant    string     `sql:"tenant"`
	Key       string     `sql:"key"`
	Kind      string     `sql:"kind"`
	Queue     string     `sql:"queue"`
	Payload   string     `sql:"payload"`
	Every     float64    `sql:"every"`
	NextRunAt *time.Time `sql:"next_run_at"`
}

// tenantArg is a tenant, or nil for every tenant.
type tenantArg struct {
	Tenant *string `sql:"tenant"`
}

type advanceArgs struct {
	keyArgs
	NextRunAt time.Time `sql:"next_run_at"`
}
