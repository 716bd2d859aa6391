package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"
)

// Golden hashes, computed outside Go with `printf '%s' VALUE | sha256sum`.
const (
	hashMainGo  = "e7d1fde3872fc53d" // /src/main.go
	hashLibrary = "3b75bfc17d6723f5" // qdrant-client:1.15.0
	hashVideo   = "a447ee1578a84992" // a1b2c3d4-e5f6-7890-abcd-ef1234567890
	hashMixed   = "e451e65dc8520046" // acme:/x:true:{"a":1,"b":[2,"<&>"]}
	hash42      = "73475cb40a568e8d" // 42
)

// h16 is the test's own derivation of {h}.
func h16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

func TestGoldenHashes(t *testing.T) {
	for in, want := range map[string]string{
		"/src/main.go": hashMainGo, "qdrant-client:1.15.0": hashLibrary,
		"a1b2c3d4-e5f6-7890-abcd-ef1234567890": hashVideo, `acme:/x:true:{"a":1,"b":[2,"<&>"]}`: hashMixed, "42": hash42,
	} {
		if got := h16(in); got != want {
			t.Errorf("h16(%q) = %s, golden %s", in, got, want)
		}
	}
}

const keyContract = v1 + `
kinds:
  file:
    ops: [ingest, update, delete]
    unique: {policy: active, scope: [payload.collection], fields: [payload.file_path]}
  library:
    unique: {policy: window, window: 24h, fields: [payload.library_name, payload.library_version]}
  transcode:
    unique: {policy: active, fields: [payload.video_id]}
  mixed:
    ops: [a, b]
    unique: {policy: active, scope: [tenant, queue, op], fields: [tenant, payload.path, payload.flag, payload.meta]}
  nested:
    unique: {policy: active, fields: [payload.source.ids.1]}
  plain: {}
`

func TestApplyDerivesKeys(t *testing.T) {
	set := mustParse(t, keyContract)
	tests := []struct {
		name    string
		spec    Spec
		key     string
		policy  string
		window  time.Duration
		payload string
	}{
		{"scope and field", Spec{Kind: "file", Op: "ingest"}, "file:docs:" + hashMainGo, PolicyActive, 0,
			`{"collection": "docs", "file_path": "/src/main.go"}`},
		{"op is not in the key", Spec{Kind: "file", Op: "delete"}, "file:docs:" + hashMainGo, PolicyActive, 0,
			`{"file_path": "/src/main.go", "collection": "docs", "size_bytes": 3}`},
		{"two fields joined with ':'", Spec{Kind: "library"}, "library::" + hashLibrary, PolicyWindow, 24 * time.Hour,
			`{"library_name": "qdrant-client", "library_version": "1.15.0"}`},
		{"no scope", Spec{Kind: "transcode"}, "transcode::" + hashVideo, PolicyActive, 0,
			`{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890"}`},
		{"tenant, queue, op and JSON values", Spec{Kind: "mixed", Op: "a", Tenant: "acme"}, "mixed:acme:default:a:" + hashMixed, PolicyActive, 0,
			`{"path": "/x", "flag": true, "meta": {"b": [2, "<&>"], "a": 1}}`},
		{"nested path and array index", Spec{Kind: "nested"}, "nested::" + hash42, PolicyActive, 0,
			`{"source": {"ids": ["x", 42]}}`},
		{"caller key wins", Spec{Kind: "file", Op: "ingest", IdempotencyKey: "mine"}, "mine", PolicyActive, 0,
			`{"collection": "docs", "file_path": "/src/main.go"}`},
		{"caller key takes the kind's window", Spec{Kind: "library", IdempotencyKey: "mine"}, "mine", PolicyWindow, 24 * time.Hour, `{}`},
		{"caller key on a kind without unique", Spec{Kind: "plain", IdempotencyKey: "mine"}, "mine", PolicyActive, 0, `{}`},
		{"caller key on an unknown kind", Spec{Kind: "other", IdempotencyKey: "mine"}, "mine", PolicyActive, 0, `{}`},
		{"no key, no unique", Spec{Kind: "plain"}, "", "", 0, `{"a": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Payload = json.RawMessage(tt.payload)
			r := mustApply(t, set, tt.spec)
			if r.IdempotencyKey != tt.key || r.UniquePolicy != tt.policy || r.UniqueWindow != tt.window {
				t.Errorf("got key %q policy %q window %v, want %q %q %v",
					r.IdempotencyKey, r.UniquePolicy, r.UniqueWindow, tt.key, tt.policy, tt.window)
			}
		})
	}
	r := mustApply(t, nil, Spec{Kind: "x", IdempotencyKey: "mine"})
	if r.IdempotencyKey != "mine" || r.UniquePolicy != PolicyActive {
		t.Errorf("nil Set with a caller key: %+v", r)
	}
}

func TestDerivedKeyMatchesIndependentDerivation(t *testing.T) {
	set := mustParse(t, keyContract)
	for _, path := range []string{"/", "/a b/ü.txt", "C:\\x", `"quoted"`, ""} {
		payload, _ := json.Marshal(map[string]string{"collection": "c:1", "file_path": path})
		r := mustApply(t, set, Spec{Kind: "file", Op: "update", Payload: payload})
		if want := "file:c:1:" + h16(path); r.IdempotencyKey != want {
			t.Errorf("path %q: key %q, want %q", path, r.IdempotencyKey, want)
		}
	}
}

func TestApplyMissingReferencedField(t *testing.T) {
	set := mustParse(t, keyContract)
	tests := []struct {
		spec    Spec
		payload string
		want    string
	}{
		{Spec{Kind: "file", Op: "ingest"}, `{"file_path": "/a"}`,
			`payload.collection: missing property "collection" (kind "file" derives its idempotency key from it)`},
		{Spec{Kind: "file", Op: "ingest"}, `{"collection": "c"}`,
			`payload.file_path: missing property "file_path" (kind "file" derives its idempotency key from it)`},
		{Spec{Kind: "nested"}, `{"source": {"ids": ["x"]}}`,
			`payload.source.ids.1: missing property "1" (kind "nested" derives its idempotency key from it)`},
		{Spec{Kind: "nested"}, `{"source": "flat"}`,
			`payload.source.ids.1: missing property "1" (kind "nested" derives its idempotency key from it)`},
	}
	for _, tt := range tests {
		tt.spec.Payload = json.RawMessage(tt.payload)
		if got := applyErr(t, set, tt.spec); got != tt.want {
			t.Errorf("payload %s:\n got %s\nwant %s", tt.payload, got, tt.want)
		}
	}
	// A caller's key needs no referenced field.
	mustApply(t, set, Spec{Kind: "file", Op: "ingest", IdempotencyKey: "k", Payload: json.RawMessage(`{}`)})
}

func TestRefValue(t *testing.T) {
	src := refSource{payload: map[string]any{"a": []any{"x", map[string]any{"b": "y"}}}}
	for ref, want := range map[string]any{"payload.a.0": "x", "payload.a.1.b": "y"} {
		if got, ok := src.value(ref); !ok || got != want {
			t.Errorf("value(%q) = %v, %v; want %v", ref, got, ok, want)
		}
	}
	for _, ref := range []string{"payload.a.2", "payload.a.-1", "payload.a.+1", "payload.a.x", "payload.b", "payload.a.0.c"} {
		if got, ok := src.value(ref); ok {
			t.Errorf("value(%q) = %v, want missing", ref, got)
		}
	}
}
