package skiplock

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/skiplock/skiplock/internal/input"
)

// DefaultMaxPayloadBytes is the payload limit of ParseJobSpec when none is
// given.
const DefaultMaxPayloadBytes = 1 << 20

// ErrTooLarge: an input is over its size limit. Errors that wrap it are
// *ValidationError too, naming the field.
var ErrTooLarge = errors.New("over the size limit")

// JobSpec is a job written as JSON: the body of POST /v1/jobs, a job of a
// batch or of a completion's next stages, a line of `skiplock enqueue
// --jsonl`.
type JobSpec struct {
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
	// Traceparent is stored in the metadata under TraceparentKey.
	Traceparent *string `json:"traceparent"`
}

// ParseJobSpec reads one job spec strictly (a field it does not know,
// invalid UTF-8 or a payload over maxPayload bytes — default
// DefaultMaxPayloadBytes — is refused) into the job's insert parameters.
// Errors are *ValidationError naming the field under prefix ("jobs[3]",
// "" for none); one over a limit wraps ErrTooLarge. The rest of the checks
// (bounds, the kind's contract) run at insert, as for every job.
func ParseJobSpec(raw []byte, prefix string, maxPayload int64) (InsertManyParams, error) {
	var spec JobSpec
	if err := input.Decode(raw, prefix, &spec); err != nil {
		return InsertManyParams{}, inputError(err)
	}
	p, err := spec.params(prefix, maxPayload)
	return p, inputError(err)
}

func (spec *JobSpec) params(prefix string, maxPayload int64) (InsertManyParams, error) {
	f := func(name string) string { return input.JoinField(prefix, name) }
	var none InsertManyParams
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayloadBytes
	}
	if spec.Kind == "" {
		return none, invalid(f("kind"), "is required")
	}
	if int64(len(spec.Payload)) > maxPayload {
		return none, input.TooLargeError(f("payload"), "is %d bytes, over the limit of %d", len(spec.Payload), maxPayload)
	}
	payload, err := input.CleanJSON(f("payload"), spec.Payload)
	if err != nil {
		return none, err
	}
	if payload == nil {
		payload = json.RawMessage("{}")
	} else if payload[0] != '{' {
		return none, invalid(f("payload"), "must be a JSON object")
	}
	metadata, err := input.CleanJSON(f("metadata"), spec.Metadata)
	if err != nil {
		return none, err
	}
	if spec.Traceparent != nil {
		tp := *spec.Traceparent
		if !ValidTraceparent(tp) {
			if len(tp) > 60 {
				tp = tp[:60] + "…"
			}
			return none, invalid(f("traceparent"), "must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>), got %q", tp)
		}
		if metadata, err = WithTraceparent(f("metadata"), metadata, tp, true); err != nil {
			return none, err
		}
	}
	opts := &InsertOpts{Priority: spec.Priority, MaxRetries: spec.MaxRetries, Metadata: metadata,
		DependsOn: spec.DependsOn, RunOnParentFailure: spec.RunOnParentFailure, Tags: spec.Tags}
	for _, t := range []struct {
		v   *string
		dst *string
	}{{spec.Op, &opts.Op}, {spec.Queue, &opts.Queue}, {spec.Tenant, &opts.Tenant},
		{spec.IdempotencyKey, &opts.IdempotencyKey}, {spec.WorkflowID, &opts.WorkflowID}, {spec.Stage, &opts.Stage}} {
		if t.v != nil {
			*t.dst = *t.v
		}
	}
	if spec.RunAt != nil {
		if spec.DelaySeconds != nil {
			return none, invalid(f("delay_seconds"), "set run_at or delay_seconds, not both")
		}
		// Insert checks the time's bounds (1970–9999 in UTC), but to it
		// year 1 (the zero time) means "now".
		at, err := time.Parse(time.RFC3339Nano, *spec.RunAt)
		if err != nil || at.IsZero() {
			return none, invalid(f("run_at"), "must be an RFC 3339 timestamp from 1970 to 9999 in UTC, got %q",
				input.Truncate(*spec.RunAt, 40))
		}
		opts.RunAt = at.UTC()
	}
	if opts.Delay, err = input.Seconds(f("delay_seconds"), spec.DelaySeconds, input.MaxDelaySeconds); err != nil {
		return none, err
	}
	if err := checkInsertOpts(spec.Kind, opts); err != nil {
		return none, prefixed(prefix, err)
	}
	return InsertManyParams{Args: RawArgs{KindName: spec.Kind, Payload: payload}, Opts: opts}, nil
}

// inputError turns the input step's errors into the library's.
func inputError(err error) error {
	var ie *input.Error
	if !errors.As(err, &ie) {
		return err
	}
	ve := &ValidationError{Field: ie.Field, Message: ie.Message}
	if ie.TooLarge {
		return &tooLargeError{ve}
	}
	return ve
}

// tooLargeError is a *ValidationError that wraps ErrTooLarge.
type tooLargeError struct{ ve *ValidationError }

func (e *tooLargeError) Error() string   { return e.ve.Error() }
func (e *tooLargeError) Unwrap() []error { return []error{e.ve, ErrTooLarge} }

// prefixed names a validation error's field under prefix.
func prefixed(prefix string, err error) error {
	var ve *ValidationError
	if prefix == "" || !errors.As(err, &ve) {
		return err
	}
	return &ValidationError{Field: input.JoinField(prefix, ve.Field), Message: ve.Message}
}
