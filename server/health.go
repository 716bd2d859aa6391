package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
)

// healthBody is /healthz's answer. A failing answer carries docs/api.md's
// error too.
type healthBody struct {
	Status   string `json:"status"`
	Database string `json:"database"`
	// Writes is "ok", "read_only" or "disk_full" (absent when the database
	// does not answer at all).
	Writes string `json:"writes,omitempty"`
	// Since is when writes began to be refused.
	Since *time.Time   `json:"since,omitempty"`
	Error *errorDetail `json:"error,omitempty"`
}

// healthz answers 200 when the database answers and takes writes: the
// latest write of any route or maintenance service succeeded, or, with no
// write for a while, the client's own small write probe did.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request, _ *principal) error {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	body := healthBody{Status: "unavailable", Database: s.drv.Name()}
	if _, err := s.stores.TokenCount(ctx); err != nil && !errors.Is(err, driver.ErrUnsupported) {
		s.log.Warn("health check: database does not answer", "error", err)
		body.Error = &errorDetail{Code: "unavailable", Message: "database does not answer"}
		writeJSON(w, http.StatusServiceUnavailable, body)
		return nil
	}
	wh := s.client.WriteHealth(ctx)
	if wh.Err == nil {
		body.Status, body.Writes = "ok", "ok"
		writeJSON(w, http.StatusOK, body)
		return nil
	}
	body.Writes = "refused"
	switch {
	case errors.Is(wh.Err, skiplock.ErrReadOnly):
		body.Writes = "read_only"
	case errors.Is(wh.Err, skiplock.ErrDiskFull):
		body.Writes = "disk_full"
	}
	since := wh.Since.UTC()
	body.Since = &since
	body.Error = &errorDetail{Code: "unavailable", Message: wh.Err.Error()}
	s.log.Warn("health check: database refuses writes", "writes", body.Writes, "since", since, "error", wh.Err)
	writeJSON(w, http.StatusServiceUnavailable, body)
	return nil
}
