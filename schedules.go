package skiplock

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/input"
)

// Schedule is a recurring per-entity schedule: the scheduler enqueues a job
// of Kind with Payload every Every, from NextRunAt on. Schedules outlive
// their jobs (seed 000's watchlist).
type Schedule = driver.Schedule

// ScheduleUpsert adds or replaces the schedule (Tenant, Key). A zero
// NextRunAt means now; another must lie from 1970 to the end of 9999 in UTC.
// Payload must be a JSON object, as a job's; none is {}.
func (c *Client) ScheduleUpsert(ctx context.Context, s *Schedule) (*Schedule, error) {
	switch {
	case s.Key == "" || len(s.Key) > 500:
		return nil, invalid("key", "must be 1 to 500 characters")
	case s.Kind == "":
		return nil, invalid("kind", "must not be empty")
	case s.Every < time.Second:
		return nil, invalid("every", "must be at least 1s, got %s", s.Every)
	}
	payload, err := schedulePayload(s.Payload)
	if err != nil {
		return nil, err
	}
	s.Payload = payload
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

// schedulePayload checks a schedule's payload once, for every caller, as
// an enqueued job's is checked: a payload the scheduler could not enqueue
// would be stored, then skipped at every run.
func schedulePayload(raw json.RawMessage) (json.RawMessage, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}"), nil
	}
	payload, err := input.CleanObject("payload", raw)
	return payload, inputError(err)
}

// ScheduleDelete removes a schedule; ErrNotFound when there is none.
func (c *Client) ScheduleDelete(ctx context.Context, tenant, key string) error {
	return c.driver.ScheduleDelete(ctx, tenant, key)
}

// ScheduleList answers the schedules, of one tenant when tenant is set.
func (c *Client) ScheduleList(ctx context.Context, tenant *string) ([]*Schedule, error) {
	return c.driver.ScheduleList(ctx, tenant)
}
