package sqlitedriver

import (
	"context"
	"database/sql"
	"time"

	"github.com/skiplock/skiplock/driver"
)

func scanSchedule(r scanner) (*driver.Schedule, error) {
	var s driver.Schedule
	var payload string
	var every float64
	var next, created, updated storedMicros
	err := r.Scan(&s.Tenant, &s.Key, &s.Kind, &s.Queue, &payload, &every, &next, &created, &updated)
	s.Payload = []byte(payload)
	s.Every = storedMicros{us: clampMicros(every * 1e6)}.duration()
	s.NextRunAt, s.CreatedAt, s.UpdatedAt = next.time(), created.time(), updated.time()
	return &s, err
}

func (e executor) ScheduleUpsert(ctx context.Context, s *driver.Schedule) (*driver.Schedule, error) {
	_, now, _ := nowArgs()
	out, err := collect(scanSchedule)(e.wquery(ctx, "ScheduleUpsert", sql.Named("tenant", s.Tenant), sql.Named("key", s.Key),
		sql.Named("kind", s.Kind), sql.Named("queue", s.Queue), sql.Named("payload", jsonOr(s.Payload, "{}")),
		sql.Named("every", s.Every.Seconds()), sql.Named("next", micros(s.NextRunAt)), now))
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (e executor) ScheduleDelete(ctx context.Context, tenant, key string) error {
	res, err := e.wexec(ctx, "ScheduleDelete", sql.Named("tenant", tenant), sql.Named("key", key))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

func (e executor) ScheduleList(ctx context.Context, tenant *string) ([]*driver.Schedule, error) {
	var t any
	if tenant != nil {
		t = *tenant
	}
	return collect(scanSchedule)(e.rquery(ctx, "ScheduleList", sql.Named("tenant", t)))
}

// ScheduleDue reads on the writer: inside a transaction the write lock is
// held until it ends, so one enqueuer takes each due schedule.
func (e executor) ScheduleDue(ctx context.Context, limit int) ([]*driver.Schedule, error) {
	_, now, _ := nowArgs()
	return collect(scanSchedule)(e.wquery(ctx, "ScheduleDue", sql.Named("limit", limit), now))
}

func (e executor) ScheduleAdvance(ctx context.Context, tenant, key string, next time.Time) error {
	_, now, _ := nowArgs()
	_, err := e.wexec(ctx, "ScheduleAdvance", sql.Named("tenant", tenant), sql.Named("key", key),
		sql.Named("next", next.UnixMicro()), now)
	return err
}
