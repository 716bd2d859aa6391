package server

import (
	"net/http"
	"time"

	"github.com/skiplock/skiplock"
)

// ProcessView is a process in GET /v1/processes (docs/api.md).
type ProcessView struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Host, PID, Version, Queues and StartedAt are a client's; an HTTP
	// worker has none.
	Host                string              `json:"host,omitempty"`
	PID                 int                 `json:"pid,omitempty"`
	Version             string              `json:"version,omitempty"`
	Queues              []string            `json:"queues"`
	StartedAt           *time.Time          `json:"started_at"`
	HeartbeatAt         *time.Time          `json:"heartbeat_at"`
	HeartbeatAgeSeconds float64             `json:"heartbeat_age_seconds"`
	RunningCount        int                 `json:"running_count"`
	Running             []ProcessJobSummary `json:"running"`
}

// ProcessJobSummary is a running job of a process.
type ProcessJobSummary struct {
	ID          int64      `json:"id"`
	Kind        string     `json:"kind"`
	Queue       string     `json:"queue"`
	Attempt     int        `json:"attempt"`
	StartedAt   *time.Time `json:"started_at"`
	HeartbeatAt *time.Time `json:"heartbeat_at"`
}

// NewProcessView answers p as the API shows it, its heartbeat's age taken
// at now.
func NewProcessView(p *skiplock.Process, now time.Time) ProcessView {
	v := ProcessView{ID: p.ID, Kind: p.Kind, Host: p.Host, PID: p.PID, Version: p.Version, Queues: p.Queues,
		RunningCount: len(p.Jobs), Running: make([]ProcessJobSummary, len(p.Jobs))}
	if v.Queues == nil {
		v.Queues = []string{}
	}
	if !p.StartedAt.IsZero() {
		at := skiplock.ViewTime(p.StartedAt)
		v.StartedAt = &at
	}
	if !p.HeartbeatAt.IsZero() {
		at := skiplock.ViewTime(p.HeartbeatAt)
		v.HeartbeatAt = &at
		v.HeartbeatAgeSeconds = max(0, now.Sub(p.HeartbeatAt).Seconds())
	}
	for i, j := range p.Jobs {
		v.Running[i] = ProcessJobSummary{ID: j.ID, Kind: j.Kind, Queue: j.Queue, Attempt: j.Attempt,
			StartedAt: j.StartedAt, HeartbeatAt: j.HeartbeatAt}
	}
	return v
}

func (s *Server) listProcesses(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := unscoped(p); err != nil {
		return err
	}
	ps, err := s.client.ProcessList(r.Context())
	if err != nil {
		return err
	}
	now := time.Now()
	out := make([]ProcessView, len(ps.Processes))
	for i, pr := range ps.Processes {
		out[i] = NewProcessView(pr, now)
	}
	writeJSON(w, http.StatusOK, map[string]any{"processes": out, "running_jobs": ps.Running, "capped": ps.Capped})
	return nil
}
