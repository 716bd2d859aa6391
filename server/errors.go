package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// apiError is an answer other than success: docs/api.md's error body.
type apiError struct {
	status  int
	code    string
	message string
	field   string
}

func (e *apiError) Error() string {
	if e.field != "" {
		return e.field + ": " + e.message
	}
	return e.message
}

func badRequest(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "invalid_argument", field: field,
		message: fmt.Sprintf(format, args...)}
}

func tooLarge(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, code: "payload_too_large", field: field,
		message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, code: "not_found", message: fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) *apiError {
	return &apiError{status: http.StatusForbidden, code: "permission_denied", message: fmt.Sprintf(format, args...)}
}

// toAPIError maps the client's errors to answers. What is not bad input,
// a missing job or a conflict is the database failing: 503.
func toAPIError(err error) *apiError {
	var ae *apiError
	var ve *skiplock.ValidationError
	var ie *input.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ie) && ie.TooLarge:
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "payload_too_large", field: ie.Field, message: ie.Message}
	case errors.As(err, &ie):
		return &apiError{status: http.StatusBadRequest, code: "invalid_argument", field: ie.Field, message: ie.Message}
	case errors.Is(err, skiplock.ErrTooLarge) && errors.As(err, &ve):
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "payload_too_large", field: ve.Field, message: ve.Message}
	case errors.As(err, &ve):
		return &apiError{status: http.StatusBadRequest, code: "invalid_argument", field: ve.Field, message: ve.Message}
	case errors.Is(err, skiplock.ErrMissingDependency):
		return &apiError{status: http.StatusBadRequest, code: "invalid_argument", field: "depends_on", message: err.Error()}
	case errors.Is(err, skiplock.ErrNotFound):
		return &apiError{status: http.StatusNotFound, code: "not_found", message: err.Error()}
	case errors.Is(err, skiplock.ErrLeaseLost), errors.Is(err, skiplock.ErrWrongState):
		return &apiError{status: http.StatusConflict, code: "conflict", message: err.Error()}
	case refusal(err) != nil:
		// Say what an operator must mend rather than "unavailable".
		return &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: refusal(err).Error()}
	}
	return &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: "database unavailable"}
}

// refusal answers the database's refusal of a write in err: a
// *skiplock.RefusedError, whose message names the condition and the
// database's own words ("database is read-only: …"), or nil.
func refusal(err error) *skiplock.RefusedError {
	var r *skiplock.RefusedError
	if errors.As(err, &r) {
		return r
	}
	return nil
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := toAPIError(err)
	if ae.status >= 500 {
		if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
			return // the caller went away; nobody reads the answer
		}
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	writeJSON(w, ae.status, errorBody{Error: errorDetail{Code: ae.code, Message: ae.message, Field: ae.field}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"encode answer"}}`)
	}
	writeRawJSON(w, status, b)
}

// writeRawJSON answers b, JSON already written, with a newline.
func writeRawJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
