package contract

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"
)

func intp(n int) *int { return &n }

// applyErr runs Apply expecting a *ValidationError and returns its text.
func applyErr(t *testing.T, set *Set, spec Spec) string {
	t.Helper()
	_, err := set.Apply(spec)
	if err == nil {
		t.Fatalf("Apply(%+v) succeeded", spec)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Apply error %v is %T, not *ValidationError", err, err)
	}
	if ve.Field == "" || ve.Message == "" {
		t.Fatalf("ValidationError %+v lacks a field or message", ve)
	}
	return ve.Error()
}

func mustApply(t *testing.T, set *Set, spec Spec) Resolved {
	t.Helper()
	r, err := set.Apply(spec)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", spec, err)
	}
	return r
}

const flowContract = v1 + `
defaults:
  queue: work
  priority: 7
  max_retries: 5
  lease: 1m
  timeout: 10m
  backoff: {type: fixed, delay: 30s}
kinds:
  plain: {}
  tuned:
    queue: fast
    priority: 9
    max_retries: 0
    lease: 30s
    timeout: 0s
    backoff: {type: exponential, base: 1s, factor: 2, max: 1m, jitter: 0.5}
`

func TestApplyDefaultsFlow(t *testing.T) {
	set := mustParse(t, flowContract)
	fixed := Backoff{Type: BackoffFixed, Delay: 30 * time.Second}
	tuned := Backoff{Type: BackoffExponential, Base: time.Second, Factor: 2, Max: time.Minute, Jitter: 0.5}
	tests := []struct {
		name string
		set  *Set
		spec Spec
		want Resolved
	}{
		{"no contracts: built-in", nil, Spec{Kind: "any"},
			Resolved{Queue: "default", Priority: 5, MaxRetries: 3, Lease: 5 * time.Minute, Backoff: DefaultBackoff}},
		{"kind without settings: file defaults", set, Spec{Kind: "plain"},
			Resolved{Queue: "work", Priority: 7, MaxRetries: 5, Lease: time.Minute, Timeout: 10 * time.Minute, Backoff: fixed, Known: true}},
		{"kind settings win over defaults", set, Spec{Kind: "tuned"},
			Resolved{Queue: "fast", Priority: 9, MaxRetries: 0, Lease: 30 * time.Second, Backoff: tuned, Known: true}},
		{"job values win over kind", set, Spec{Kind: "tuned", Queue: "slow", Priority: intp(0), MaxRetries: intp(8)},
			Resolved{Queue: "slow", Priority: 0, MaxRetries: 8, Lease: 30 * time.Second, Backoff: tuned, Known: true}},
		{"unknown kind, not strict: file defaults", set, Spec{Kind: "other", Op: "anything"},
			Resolved{Queue: "work", Priority: 7, MaxRetries: 5, Lease: time.Minute, Timeout: 10 * time.Minute, Backoff: fixed}},
		{"priority bounds accepted", nil, Spec{Kind: "any", Priority: intp(10), MaxRetries: intp(0)},
			Resolved{Queue: "default", Priority: 10, MaxRetries: 0, Lease: 5 * time.Minute, Backoff: DefaultBackoff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustApply(t, tt.set, tt.spec)
			tt.want.Payload = json.RawMessage(`{}`)
			if string(got.Payload) != "{}" {
				t.Errorf("Payload = %s, want {}", got.Payload)
			}
			got.Payload = tt.want.Payload
			if got.Backoff != tt.want.Backoff || got.Queue != tt.want.Queue || got.Priority != tt.want.Priority ||
				got.MaxRetries != tt.want.MaxRetries || got.Lease != tt.want.Lease || got.Timeout != tt.want.Timeout ||
				got.Known != tt.want.Known || got.IdempotencyKey != "" || got.UniquePolicy != "" {
				t.Errorf("Apply:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

const rulesContract = v1 + `
strict: true
kinds:
  file:
    ops: [ingest, update, delete]
    payload:
      type: object
      required: [file_path]
      properties:
        file_path: {type: string, minLength: 1}
        size_bytes: {type: integer, minimum: 0}
        frame_paths: {type: array, items: {type: string}}
        meta: {type: object, properties: {pages: {type: integer, maximum: 100}}}
        source_type: {enum: [scratchbook, mcp, clipboard]}
        video_id: {type: string, format: uuid}
        hash: {type: string, pattern: "^sha256:"}
        ratio: {type: number, exclusiveMinimum: 0, exclusiveMaximum: 1}
        tags: {type: array, uniqueItems: true, maxItems: 2}
        kind: {const: doc}
      additionalProperties: false
  transcode:
    payload: {type: object}
`

func TestApplyRejects(t *testing.T) {
	set := mustParse(t, rulesContract)
	file := func(op, payload string) Spec { return Spec{Kind: "file", Op: op, Payload: json.RawMessage(payload)} }
	const ok = `"file_path": "/a"`
	tests := []struct {
		name string
		set  *Set
		spec Spec
		want string
	}{
		{"kind empty", set, Spec{}, "kind: required"},
		{"kind empty without contracts", nil, Spec{}, "kind: required"},
		{"unknown kind in strict mode", set, Spec{Kind: "fil"}, `kind: unknown kind "fil" (strict mode)`},
		{"kind names are case-sensitive", set, Spec{Kind: "File", Op: "ingest"}, `kind: unknown kind "File" (strict mode)`},
		{"op not allowed", set, file("scan", `{`+ok+`}`), `op: "scan" is not allowed for kind "file" (allowed: ingest, update, delete)`},
		{"op missing", set, file("", `{`+ok+`}`), `op: required for kind "file" (allowed: ingest, update, delete)`},
		{"op on kind without ops", set, Spec{Kind: "transcode", Op: "scan"}, `op: kind "transcode" takes no op, got "scan"`},
		{"priority above range", set, Spec{Kind: "transcode", Priority: intp(11)}, "priority: must be between 0 and 10, got 11"},
		{"priority below range", nil, Spec{Kind: "x", Priority: intp(-1)}, "priority: must be between 0 and 10, got -1"},
		{"max_retries negative", nil, Spec{Kind: "x", MaxRetries: intp(-1)}, "max_retries: must be >= 0, got -1"},
		{"payload array", set, file("ingest", `[1]`), "payload: expected object, got array"},
		{"payload array without contracts", nil, Spec{Kind: "x", Payload: json.RawMessage(`[]`)}, "payload: expected object, got array"},
		{"payload string", nil, Spec{Kind: "x", Payload: json.RawMessage(`"x"`)}, "payload: expected object, got string"},
		{"payload invalid JSON", nil, Spec{Kind: "x", Payload: json.RawMessage(`{"a":`)}, "payload: invalid JSON: unexpected EOF"},
		{"payload trailing data", nil, Spec{Kind: "x", Payload: json.RawMessage(`{} {}`)}, "payload: invalid JSON: invalid character after top-level value"},
		{"missing required", set, file("ingest", `{}`), `payload.file_path: missing property "file_path"`},
		{"wrong type", set, file("ingest", `{`+ok+`, "frame_paths": "a.jpg"}`), "payload.frame_paths: expected array, got string"},
		{"array item", set, file("ingest", `{`+ok+`, "frame_paths": ["a", 2]}`), "payload.frame_paths.1: expected string, got number"},
		{"minimum", set, file("ingest", `{`+ok+`, "size_bytes": -1}`), "payload.size_bytes: must be >= 0"},
		{"integer", set, file("ingest", `{`+ok+`, "size_bytes": 1.5}`), "payload.size_bytes: expected integer, got number"},
		{"nested maximum", set, file("ingest", `{`+ok+`, "meta": {"pages": 101}}`), "payload.meta.pages: must be <= 100"},
		{"min length", set, file("ingest", `{"file_path": ""}`), "payload.file_path: must be at least 1 character long"},
		{"enum", set, file("ingest", `{`+ok+`, "source_type": "fax"}`), `payload.source_type: must be one of "scratchbook", "mcp", "clipboard"`},
		{"const", set, file("ingest", `{`+ok+`, "kind": "pdf"}`), `payload.kind: must be "doc"`},
		{"format", set, file("ingest", `{`+ok+`, "video_id": "nope"}`), "payload.video_id: must be a valid uuid"},
		{"pattern", set, file("ingest", `{`+ok+`, "hash": "md5:1"}`), `payload.hash: must match pattern "^sha256:"`},
		{"exclusive minimum", set, file("ingest", `{`+ok+`, "ratio": 0}`), "payload.ratio: must be > 0"},
		{"exclusive maximum", set, file("ingest", `{`+ok+`, "ratio": 1}`), "payload.ratio: must be < 1"},
		{"unique items", set, file("ingest", `{`+ok+`, "tags": [1, 1]}`), "payload.tags: must not contain duplicates (items 0 and 1 are equal)"},
		{"max items", set, file("ingest", `{`+ok+`, "tags": [1, 2, 3]}`), "payload.tags: must have at most 2 items"},
		{"additional property", set, file("ingest", `{`+ok+`, "extra": 1, "another": 2}`), `payload.another: property "another" is not allowed`},
		{"deepest field wins", set, file("ingest", `{"size_bytes": "x", "meta": {"pages": "y"}}`), "payload.meta.pages: expected integer, got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := applyErr(t, tt.set, tt.spec); got != tt.want {
				t.Errorf("Apply error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestApplyPayload(t *testing.T) {
	for _, in := range []string{"", "  ", "null", " null "} {
		r := mustApply(t, nil, Spec{Kind: "x", Payload: json.RawMessage(in)})
		if string(r.Payload) != "{}" {
			t.Errorf("payload %q resolved to %s, want {}", in, r.Payload)
		}
	}
	r := mustApply(t, nil, Spec{Kind: "x", Payload: json.RawMessage(` {"a": 1} `)})
	if string(r.Payload) != `{"a": 1}` {
		t.Errorf("payload resolved to %s", r.Payload)
	}
}

func TestApplyValidationErrorFields(t *testing.T) {
	set := mustParse(t, rulesContract)
	_, err := set.Apply(Spec{Kind: "file", Op: "ingest", Payload: json.RawMessage(`{}`)})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "payload.file_path" || ve.Message != `missing property "file_path"` {
		t.Errorf("Apply = %#v, want Field payload.file_path", err)
	}
	// A valid job's error is a true nil, not a nil *ValidationError.
	if _, err := set.Apply(Spec{Kind: "file", Op: "ingest", Payload: json.RawMessage(`{"file_path": "/a"}`)}); err != nil {
		t.Errorf("Apply = %#v, want nil", err)
	}
}

func TestApplyConcurrent(t *testing.T) {
	set := mustParse(t, rulesContract)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				spec := Spec{Kind: "file", Op: "ingest", Payload: json.RawMessage(`{"file_path": "/a", "size_bytes": -1}`)}
				if i%2 == 0 {
					spec.Payload = json.RawMessage(`{"file_path": "/a"}`)
				}
				_, err := set.Apply(spec)
				if (err == nil) != (i%2 == 0) {
					t.Errorf("goroutine %d: Apply = %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestApplyZeroSetUsesBuiltins(t *testing.T) {
	r := mustApply(t, &Set{}, Spec{Kind: "x"})
	if r.Queue != DefaultQueue || r.Priority != DefaultPriority || r.Lease != DefaultLease || r.Backoff != DefaultBackoff {
		t.Errorf("zero Set resolved %+v", r)
	}
	if _, err := (&Set{Strict: true}).Apply(Spec{Kind: "x"}); err == nil {
		t.Errorf("strict zero Set accepted an unknown kind")
	}
}
