package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/skiplock/skiplock"
)

// Bounds of a job spec's fields, so that no input reaches the database's
// own limits (index row size, integer range) and answers 5xx.
const (
	maxNameBytes     = 200
	maxKeyBytes      = 500
	maxTags          = 100
	maxDependsOn     = 1000
	maxMaxRetries    = 1_000_000
	maxDelaySeconds  = 10 * 366 * 24 * 3600
	maxMessageBytes  = 64 << 10
	maxProgressBytes = 4 << 10
)

// jobSpec is a job as a producer (or a completing worker, in `next`)
// sends it: docs/api.md's POST /v1/jobs body.
type jobSpec struct {
	Kind               string          `json:"kind"`
	Payload            json.RawMessage `json:"payload"`
	Op                 *string         `json:"op"`
	Queue              *string         `json:"queue"`
	Tenant             *string         `json:"tenant"`
	Priority           *int            `json:"priority"`
	RunAt              *string         `json:"run_at"`
	DelaySeconds       *float64        `json:"delay_seconds"`
	MaxRetries         *int            `json:"max_retries"`
	IdempotencyKey     *string         `json:"idempotency_key"`
	DependsOn          []int64         `json:"depends_on"`
	WorkflowID         *string         `json:"workflow_id"`
	Stage              *string         `json:"stage"`
	Tags               []string        `json:"tags"`
	Metadata           json.RawMessage `json:"metadata"`
	RunOnParentFailure bool            `json:"run_on_parent_failure"`
	// Traceparent is stored in the metadata as its traceparent key.
	Traceparent *string `json:"traceparent"`
}

// parseSpec decodes a job spec; errors name the field under prefix.
func (s *Server) parseSpec(raw []byte, prefix string, p *principal) (skiplock.InsertManyParams, error) {
	var spec jobSpec
	if err := decodeJSON(raw, prefix, &spec); err != nil {
		return skiplock.InsertManyParams{}, err
	}
	return s.specParams(&spec, prefix, p)
}

func (s *Server) specParams(spec *jobSpec, prefix string, p *principal) (skiplock.InsertManyParams, error) {
	f := func(name string) string { return joinField(prefix, name) }
	var none skiplock.InsertManyParams
	if spec.Kind == "" {
		return none, badRequest(f("kind"), "is required")
	}
	if int64(len(spec.Payload)) > s.cfg.MaxPayloadBytes {
		return none, tooLarge(f("payload"), "is %d bytes, over the limit of %d", len(spec.Payload), s.cfg.MaxPayloadBytes)
	}
	payload, err := cleanJSON(f("payload"), spec.Payload)
	if err != nil {
		return none, err
	}
	if payload == nil {
		payload = json.RawMessage("{}")
	} else if payload[0] != '{' {
		return none, badRequest(f("payload"), "must be a JSON object")
	}
	metadata, err := cleanJSON(f("metadata"), spec.Metadata)
	if err != nil {
		return none, err
	}
	if spec.Traceparent != nil {
		if !validTraceparent(*spec.Traceparent) {
			return none, badRequest(f("traceparent"), "must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>), got %q", truncate(*spec.Traceparent, 60))
		}
		if metadata, err = withTraceparent(f("metadata"), metadata, *spec.Traceparent, true); err != nil {
			return none, err
		}
	}
	opts := &skiplock.InsertOpts{Priority: spec.Priority, MaxRetries: spec.MaxRetries, Metadata: metadata,
		DependsOn: spec.DependsOn, RunOnParentFailure: spec.RunOnParentFailure, Tags: spec.Tags}
	texts := []struct {
		name string
		v    *string
		dst  *string
		max  int
	}{
		{"op", spec.Op, &opts.Op, maxNameBytes},
		{"queue", spec.Queue, &opts.Queue, maxNameBytes},
		{"tenant", spec.Tenant, &opts.Tenant, maxNameBytes},
		{"idempotency_key", spec.IdempotencyKey, &opts.IdempotencyKey, maxKeyBytes},
		{"workflow_id", spec.WorkflowID, &opts.WorkflowID, maxKeyBytes},
		{"stage", spec.Stage, &opts.Stage, maxNameBytes},
	}
	if err := checkText(f("kind"), spec.Kind, maxNameBytes); err != nil {
		return none, err
	}
	for _, t := range texts {
		if t.v == nil {
			continue
		}
		if err := checkText(f(t.name), *t.v, t.max); err != nil {
			return none, err
		}
		*t.dst = *t.v
	}
	if err := checkSpecRanges(spec, f); err != nil {
		return none, err
	}
	if spec.RunAt != nil {
		if spec.DelaySeconds != nil {
			return none, badRequest(f("delay_seconds"), "set run_at or delay_seconds, not both")
		}
		// The client checks the time's bounds (1970–9999 in UTC), but to
		// it year 1 (the zero time) means "now".
		at, err := time.Parse(time.RFC3339Nano, *spec.RunAt)
		if err != nil || at.IsZero() {
			return none, badRequest(f("run_at"), "must be an RFC 3339 timestamp from 1970 to 9999 in UTC, got %q", truncate(*spec.RunAt, 40))
		}
		opts.RunAt = at.UTC()
	}
	if opts.Delay, err = secondsParam(f("delay_seconds"), spec.DelaySeconds, maxDelaySeconds); err != nil {
		return none, err
	}
	if p != nil && p.scoped {
		opts.Tenant = p.tenant // a scoped token enqueues for its tenant only
	}
	return skiplock.InsertManyParams{Args: skiplock.RawArgs{KindName: spec.Kind, Payload: payload}, Opts: opts}, nil
}

func checkSpecRanges(spec *jobSpec, f func(string) string) error {
	if spec.Priority != nil && (*spec.Priority < 0 || *spec.Priority > 10) {
		return badRequest(f("priority"), "must be between 0 and 10, got %d", *spec.Priority)
	}
	if spec.MaxRetries != nil && (*spec.MaxRetries < 0 || *spec.MaxRetries > maxMaxRetries) {
		return badRequest(f("max_retries"), "must be between 0 and %d, got %d", maxMaxRetries, *spec.MaxRetries)
	}
	if len(spec.Tags) > maxTags {
		return badRequest(f("tags"), "must have at most %d tags, got %d", maxTags, len(spec.Tags))
	}
	for i, t := range spec.Tags {
		if err := checkText(f(fmt.Sprintf("tags[%d]", i)), t, maxNameBytes); err != nil {
			return err
		}
	}
	if len(spec.DependsOn) > maxDependsOn {
		return badRequest(f("depends_on"), "must name at most %d jobs, got %d", maxDependsOn, len(spec.DependsOn))
	}
	for i, id := range spec.DependsOn {
		if id <= 0 {
			return badRequest(f(fmt.Sprintf("depends_on[%d]", i)), "must be a positive job id, got %d", id)
		}
	}
	return nil
}

// checkParents makes a scoped token's dependencies name only jobs of its
// tenant: another tenant's job is as missing as one that does not exist.
func (s *Server) checkParents(ctx context.Context, prefix string, p *principal, jobs []skiplock.InsertManyParams) error {
	if p == nil || !p.scoped {
		return nil
	}
	for i, j := range jobs {
		for k, id := range j.Opts.DependsOn {
			parent, err := s.client.JobGet(ctx, id)
			if errors.Is(err, skiplock.ErrNotFound) || (err == nil && !p.sees(parent.Tenant)) {
				field := fmt.Sprintf("depends_on[%d]", k)
				if prefix != "" {
					field = fmt.Sprintf("%s[%d].%s", prefix, i, field)
				}
				return badRequest(field, "no job %d", id)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// ParseJobSpec reads one job spec, a POST /v1/jobs body, by the server's
// rules and default limits (for the CLI's `enqueue --jsonl`); errors name
// the field, as the server's answers do.
func ParseJobSpec(raw []byte) (skiplock.InsertManyParams, error) {
	s := &Server{cfg: Config{MaxPayloadBytes: DefaultMaxPayloadBytes}}
	return s.parseSpec(raw, "", nil)
}
