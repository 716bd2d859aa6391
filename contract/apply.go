package contract

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Spec is a job about to be enqueued, as the caller gave it. Nil pointers
// and "" mean "not given".
type Spec struct {
	Kind           string
	Op             string
	Queue          string
	Tenant         string
	IdempotencyKey string
	Priority       *int
	MaxRetries     *int
	Payload        json.RawMessage
}

// Resolved is what the contract decided for a job.
type Resolved struct {
	Queue      string
	Priority   int
	MaxRetries int
	Lease      time.Duration
	Timeout    time.Duration // 0: none
	Backoff    Backoff

	// IdempotencyKey is the caller's key, else the one derived from the
	// kind's unique, else "". UniquePolicy is "" exactly when it is "".
	IdempotencyKey string
	UniquePolicy   string        // "", PolicyActive or PolicyWindow
	UniqueWindow   time.Duration // PolicyWindow only

	// Known reports that the kind has a contract.
	Known bool
	// Payload is the payload to store: the caller's, or {} when it gave
	// none (or null).
	Payload json.RawMessage
}

// Apply validates a job against its kind's contract and fills in what the
// job left out: each value comes from the job, else its kind, else the
// file's defaults, else the built-in defaults (queue "default", priority 5,
// max_retries 3, lease 5m, no timeout, DefaultBackoff).
//
// It rejects an empty or (in strict mode) unknown kind, an op the kind does
// not allow, a priority outside 0..10, a negative max_retries, a payload
// that is not a JSON object or breaks the kind's schema, and a payload
// missing a field the kind's unique references. Every error is a
// *ValidationError naming the field at fault.
//
// A nil *Set means no contracts: every kind is accepted with the built-in
// defaults, any op is allowed, and the payload need only be an object.
func (s *Set) Apply(spec Spec) (Resolved, error) {
	r, verr := s.apply(spec)
	if verr != nil {
		return Resolved{}, verr
	}
	return r, nil
}

func (s *Set) apply(spec Spec) (Resolved, *ValidationError) {
	if spec.Kind == "" {
		return Resolved{}, invalid("kind", "required")
	}
	st := s.settings()
	var k *Kind
	if s != nil {
		k = s.kinds[spec.Kind]
		if k == nil && s.Strict {
			return Resolved{}, invalid("kind", "unknown kind %q (strict mode)", spec.Kind)
		}
	}
	if k != nil {
		if err := checkOp(k, spec.Op); err != nil {
			return Resolved{}, err
		}
		st = settings{k.Queue, k.Priority, k.MaxRetries, k.Lease, k.Timeout, k.Backoff}
	}
	r, err := override(st, spec)
	if err != nil {
		return Resolved{}, err
	}
	r.Known = k != nil
	if !needsDecoding(k, spec) {
		// The hot path of most inserts: nothing reads the payload's fields.
		if raw, ok := plainObject(spec.Payload); ok {
			r.Payload = raw
			return r, r.setKey(k, spec, nil)
		}
	}
	payload, raw, err := decodePayload(spec.Payload)
	if err != nil {
		return Resolved{}, err
	}
	r.Payload = raw
	if k != nil && k.schema != nil {
		if verr := k.schema.Validate(payload); verr != nil {
			return Resolved{}, payloadError(verr)
		}
	}
	if err := r.setKey(k, spec, payload); err != nil {
		return Resolved{}, err
	}
	return r, nil
}

// settings are the file's defaults. A nil or zero Set (not made by Parse)
// has none and uses the built-in ones.
func (s *Set) settings() settings {
	if s == nil || s.defaults == (settings{}) {
		return builtinSettings()
	}
	return s.defaults
}

func checkOp(k *Kind, op string) *ValidationError {
	allowed := strings.Join(k.Ops, ", ")
	switch {
	case len(k.Ops) == 0 && op != "":
		return invalid("op", "kind %q takes no op, got %q", k.Name, op)
	case len(k.Ops) > 0 && op == "":
		return invalid("op", "required for kind %q (allowed: %s)", k.Name, allowed)
	case len(k.Ops) > 0 && !slices.Contains(k.Ops, op):
		return invalid("op", "%q is not allowed for kind %q (allowed: %s)", op, k.Name, allowed)
	}
	return nil
}

// override applies the job's own values over the settings.
func override(st settings, spec Spec) (Resolved, *ValidationError) {
	r := Resolved{
		Queue: st.queue, Priority: st.priority, MaxRetries: st.maxRetries,
		Lease: st.lease, Timeout: st.timeout, Backoff: st.backoff,
	}
	if spec.Queue != "" {
		r.Queue = spec.Queue
	}
	if p := spec.Priority; p != nil {
		if *p < MinPriority || *p > MaxPriority {
			return Resolved{}, invalid("priority", "must be between %d and %d, got %d", MinPriority, MaxPriority, *p)
		}
		r.Priority = *p
	}
	if m := spec.MaxRetries; m != nil {
		if *m < 0 {
			return Resolved{}, invalid("max_retries", "must be >= 0, got %d", *m)
		}
		r.MaxRetries = *m
	}
	return r, nil
}

var emptyObject = json.RawMessage(`{}`)

// needsDecoding reports whether the payload's fields are read: by the kind's
// schema, or to derive its idempotency key.
func needsDecoding(k *Kind, spec Spec) bool {
	return k != nil && (k.schema != nil || (k.Unique != nil && spec.IdempotencyKey == ""))
}

// plainObject answers a payload that is a valid JSON object (or none) without
// decoding it; false sends the caller to decodePayload for the error.
func plainObject(raw json.RawMessage) (json.RawMessage, bool) {
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		return emptyObject, true
	case trimmed[0] == '{' && json.Valid(trimmed):
		return trimmed, true
	}
	return nil, false
}

// decodePayload decodes the payload, which must be a JSON object; none at
// all (or null) stands for {}.
func decodePayload(raw json.RawMessage) (map[string]any, json.RawMessage, *ValidationError) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return map[string]any{}, emptyObject, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return nil, nil, invalid("payload", "invalid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, invalid("payload", "expected object, got %s", typeName(v))
	}
	return obj, trimmed, nil
}

// setKey sets the idempotency key and its policy. A caller's key always
// wins; it then follows the kind's policy, or active when the kind has no
// unique.
func (r *Resolved) setKey(k *Kind, spec Spec, payload map[string]any) *ValidationError {
	var u *Unique
	if k != nil {
		u = k.Unique
	}
	switch {
	case spec.IdempotencyKey != "":
		r.IdempotencyKey = spec.IdempotencyKey
	case u != nil:
		key, err := deriveKey(u, refSource{
			kind: spec.Kind, tenant: spec.Tenant, queue: r.Queue, op: spec.Op, payload: payload,
		})
		if err != nil {
			return err
		}
		r.IdempotencyKey = key
	default:
		return nil
	}
	r.UniquePolicy = PolicyActive
	if u != nil {
		r.UniquePolicy, r.UniqueWindow = u.Policy, u.Window
	}
	return nil
}
