package server

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// ScheduleView is a schedule as GET /v1/schedules shows it.
type ScheduleView = skiplock.ScheduleView

// NewScheduleView answers the view of s.
func NewScheduleView(s *skiplock.Schedule) ScheduleView { return skiplock.NewScheduleView(s) }

// scheduleTenant is the tenant a schedule request acts for: the token's
// when scoped, else ?tenant= (default "").
func scheduleTenant(r *http.Request, p *principal) (string, error) {
	if p.scoped {
		return p.tenant, nil
	}
	t := r.URL.Query().Get("tenant")
	return t, input.CheckText("tenant", t, input.MaxNameBytes)
}

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request, p *principal) error {
	var tenant *string
	if p.scoped || r.URL.Query().Has("tenant") {
		t, err := scheduleTenant(r, p)
		if err != nil {
			return err
		}
		tenant = &t
	}
	list, err := s.client.ScheduleList(r.Context(), tenant)
	if err != nil {
		return err
	}
	out := make([]ScheduleView, len(list))
	for i, sc := range list {
		out[i] = NewScheduleView(sc)
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": out})
	return nil
}

type scheduleBody struct {
	Kind         string          `json:"kind"`
	Payload      json.RawMessage `json:"payload"`
	Queue        string          `json:"queue"`
	EverySeconds *float64        `json:"every_seconds"`
	NextRunAt    *string         `json:"next_run_at"`
}

func (s *Server) putSchedule(w http.ResponseWriter, r *http.Request, p *principal) error {
	key := r.PathValue("key")
	if err := input.CheckText("key", key, input.MaxKeyBytes); err != nil {
		return err
	}
	tenant, err := scheduleTenant(r, p)
	if err != nil {
		return err
	}
	var b scheduleBody
	if err := decodeBody(r, s.singleBodyLimit(), &b); err != nil {
		return err
	}
	sc, err := s.scheduleFromBody(key, tenant, &b)
	if err != nil {
		return err
	}
	saved, err := s.client.ScheduleUpsert(r.Context(), sc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedule": NewScheduleView(saved)})
	return nil
}

func (s *Server) scheduleFromBody(key, tenant string, b *scheduleBody) (*skiplock.Schedule, error) {
	if b.Kind == "" {
		return nil, badRequest("kind", "is required")
	}
	if err := input.CheckText("kind", b.Kind, input.MaxNameBytes); err != nil {
		return nil, err
	}
	if err := input.CheckText("queue", b.Queue, input.MaxNameBytes); err != nil {
		return nil, err
	}
	if b.EverySeconds == nil {
		return nil, badRequest("every_seconds", "is required")
	}
	every, err := input.Seconds("every_seconds", b.EverySeconds, input.MaxDelaySeconds)
	if err != nil {
		return nil, err
	}
	if every < time.Second {
		return nil, badRequest("every_seconds", "must be at least 1, got %s", input.Number(*b.EverySeconds))
	}
	if int64(len(b.Payload)) > s.cfg.MaxPayloadBytes {
		return nil, tooLarge("payload", "is over the limit of %d bytes", s.cfg.MaxPayloadBytes)
	}
	next := time.Now().UTC()
	if b.NextRunAt != nil {
		// The client checks the time's bounds (1970–9999 in UTC), but to
		// it year 1 (the zero time) means "now".
		at, err := time.Parse(time.RFC3339Nano, *b.NextRunAt)
		if err != nil || at.IsZero() {
			return nil, badRequest("next_run_at", "must be an RFC 3339 timestamp from 1970 to 9999 in UTC, got %q", input.Truncate(*b.NextRunAt, 40))
		}
		next = at.UTC()
	}
	return &skiplock.Schedule{Key: key, Tenant: tenant, Kind: b.Kind, Queue: b.Queue, Payload: b.Payload,
		Every: every, NextRunAt: next}, nil
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request, p *principal) error {
	key := r.PathValue("key")
	if err := input.CheckText("key", key, input.MaxKeyBytes); err != nil {
		return err
	}
	tenant, err := scheduleTenant(r, p)
	if err != nil {
		return err
	}
	if err := s.client.ScheduleDelete(r.Context(), tenant, key); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true, "key": key, "tenant": tenant})
	return nil
}
