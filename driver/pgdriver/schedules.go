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
	rows, err := e.q.Query(ctx, q("ScheduleUpsert"), s.Tenant, s.Key, s.Kind, s.Queue, jsonOr(s.Payload, "{}"),
		secs(s.Every), next)
	if err != nil {
		return nil, err
	}
	return pgx.CollectExactlyOneRow(rows, scanSchedule)
}

func (e executor) ScheduleDelete(ctx context.Context, tenant, key string) error {
	tag, err := e.q.Exec(ctx, q("ScheduleDelete"), tenant, key)
	if err == nil && tag.RowsAffected() == 0 {
		return driver.ErrNotFound
	}
	return err
}

func (e executor) ScheduleList(ctx context.Context, tenant *string) ([]*driver.Schedule, error) {
	rows, err := e.q.Query(ctx, q("ScheduleList"), tenant)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanSchedule)
}

func (e executor) ScheduleDue(ctx context.Context, limit int) ([]*driver.Schedule, error) {
	rows, err := e.q.Query(ctx, q("ScheduleDue"), limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanSchedule)
}

func (e executor) ScheduleAdvance(ctx context.Context, tenant, key string, next time.Time) error {
	_, err := e.q.Exec(ctx, q("ScheduleAdvance"), tenant, key, next)
	return err
}
