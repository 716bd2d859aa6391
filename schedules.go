package skiplock

import (
	"context"
	"encoding/json"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Schedule is a recurring per-entity schedule: the scheduler enqueues a job
// of Kind with Payload every Every, from NextRunAt on. Schedules outlive
// their jobs (seed 000's watchlist).
type Schedule = driver.Schedule

// ScheduleUpsert adds or replaces the schedule (Tenant, Key). A zero
// NextRunAt means now; another must lie from 1970 to the end of 9999 in UTC.
func (c *Client) ScheduleUpsert(ctx context.Context, s *Schedule) (*Schedule, error) {
	switch {
	case s.Key == "" || len(s.Key) > 500:
		return nil, invalid("key", "must be 1 to 500 characters")
	case s.Kind == "":
		return nil, invalid("kind", "must not be empty")
	case s.Every < time.Second:
		return nil, invalid("every", "must be at least 1s, got %s", s.Every)
	case len(s.Payload) > 0 && !json.Valid(s.Payload):
		return nil, invalid("payload", "must be valid JSON")
	}
	if !s.NextRunAt.IsZero() {
		if err := checkTime("next_run_at", s.NextRunAt); err != nil {
			return nil, err
		}
	}
	if s.Queue == "" {
		s.Queue = DefaultQueue
	}
	return c.driver.ScheduleUpsert(ctx, s)
}

// ScheduleDelete removes a schedule; ErrNotFound when there is none.
func (c *Client) ScheduleDelete(ctx context.Context, tenant, key string) error {
	return c.driver.ScheduleDelete(ctx, tenant, key)
}

// ScheduleList answers the schedules, of one tenant when tenant is set.
func (c *Client) ScheduleList(ctx context.Context, tenant *string) ([]*Schedule, error) {
	return c.driver.ScheduleList(ctx, tenant)
}
