package server

import (
	"net/url"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// listFilters reads GET /v1/jobs's filters beyond state, kind, queue, tenant
// and workflow_id: tag (repeatable), metadata=KEY:VALUE and
// payload=KEY:VALUE (repeatable), worker_id, error_type, error_message,
// idempotency_key, and created_/finished_ after/before (RFC 3339).
func listFilters(q url.Values, lp *skiplock.JobListParams) error {
	for _, t := range q["tag"] {
		if err := input.CheckText("tag", t, input.MaxKeyBytes); err != nil {
			return err
		}
		if t == "" {
			return badRequest("tag", "must not be empty")
		}
		lp.Tags = append(lp.Tags, t)
	}
	for _, f := range []struct {
		name string
		dst  *map[string]any
	}{{"metadata", &lp.Metadata}, {"payload", &lp.Payload}} {
		for _, pair := range q[f.name] {
			if err := input.CheckText(f.name, pair, input.MaxKeyBytes); err != nil {
				return err
			}
		}
		m, err := MetadataFilter(q[f.name])
		if err != nil {
			return badRequest(f.name, "%s", err)
		}
		*f.dst = m
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"worker_id", &lp.WorkerID}, {"error_type", &lp.ErrorType}, {"error_message", &lp.ErrorMessage},
		{"idempotency_key", &lp.IdempotencyKey}} {
		v := q.Get(f.name)
		if err := input.CheckText(f.name, v, input.MaxKeyBytes); err != nil {
			return err
		}
		*f.dst = v
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"created_after", &lp.CreatedAfter}, {"created_before", &lp.CreatedBefore},
		{"finished_after", &lp.FinishedAfter}, {"finished_before", &lp.FinishedBefore}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return badRequest(f.name, "must be an RFC 3339 time, got %q", input.Truncate(v, 40))
		}
		*f.dst = at
	}
	return nil
}

// MetadataFilter reads KEY:VALUE pairs into a metadata or payload filter.
// VALUE is taken as JSON when it is JSON (5, true, "5", {"a":1}), else as a
// string (acme); a key may repeat only with the same value.
func MetadataFilter(pairs []string) (map[string]any, error) { return input.KeyValues(pairs) }
