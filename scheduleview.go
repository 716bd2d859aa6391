package skiplock

import (
	"encoding/json"
	"time"
)

// ScheduleView is a schedule as the HTTP API and the CLI show it
// (GET /v1/schedules, `skiplock schedules list`).
type ScheduleView struct {
	Key          string          `json:"key"`
	Tenant       string          `json:"tenant"`
	Kind         string          `json:"kind"`
	Queue        string          `json:"queue"`
	Payload      json.RawMessage `json:"payload"`
	EverySeconds float64         `json:"every_seconds"`
	NextRunAt    time.Time       `json:"next_run_at"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
}

// NewScheduleView answers the view of s. Its times are in UTC and held
// within what JSON can write (ViewTime), as a JobView's are.
func NewScheduleView(s *Schedule) ScheduleView {
	payload := json.RawMessage(s.Payload)
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	return ScheduleView{Key: s.Key, Tenant: s.Tenant, Kind: s.Kind, Queue: s.Queue, Payload: payload,
		EverySeconds: s.Every.Seconds(), NextRunAt: ViewTime(s.NextRunAt),
		CreatedAt: ViewTime(s.CreatedAt), UpdatedAt: ViewTime(s.UpdatedAt)}
}
