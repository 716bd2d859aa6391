package contract

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	seed001File = "../examples/contracts/unified-queue.yaml"
	seed004File = "../examples/contracts/video-pipeline.yaml"
)

func mustLoad(t *testing.T, path string) *Set {
	t.Helper()
	set, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return set
}

// seed001Matrix is the "Item Type and Operation Compatibility Matrix" of
// shared/seeds/001, copied as it stands.
const seed001Matrix = `
item_type        | ingest | update | delete | scan
-----------------|--------|--------|--------|------
content          |   Y    |   Y    |   Y    |  N
file             |   Y    |   Y    |   Y    |  N
folder           |   Y    |   N    |   Y    |  Y
project          |   Y    |   N    |   Y    |  Y
library          |   Y    |   Y    |   Y    |  N
delete_tenant    |   N    |   N    |   Y    |  N
delete_document  |   N    |   N    |   Y    |  N
rename           |   N    |   Y    |   N    |  N
`

// seed001Items gives, per item type, a payload from the seed's examples
// (plus the collection), the value its key hashes, and its priority.
var seed001Items = map[string]struct {
	payload  string
	hashed   string
	priority int
}{
	"content": {`{"collection": "c", "content": "The actual text content", "source_type": "mcp", "main_tag": "t", "full_tag": "a/b"}`,
		"The actual text content", 8},
	"file": {`{"collection": "c", "file_path": "/absolute/path/to/file", "file_type": "code", "file_hash": "sha256:ab", "size_bytes": 12345}`,
		"/absolute/path/to/file", 5},
	"folder": {`{"collection": "c", "folder_path": "/absolute/path/to/folder", "recursive": true, "recursive_depth": 10, "patterns": ["*.py", "*.rs"], "ignore_patterns": ["*.pyc", "__pycache__/*"]}`,
		"/absolute/path/to/folder", 3},
	"project": {`{"collection": "c", "project_root": "/absolute/path", "git_remote": "https://github.com/x/y", "project_type": "rust"}`,
		"/absolute/path", 5},
	"library": {`{"collection": "c", "library_name": "qdrant-client", "library_version": "1.15.0", "source_url": "https://x"}`,
		"qdrant-client:1.15.0", 1},
	"delete_tenant": {`{"collection": "c", "tenant_id_to_delete": "t-1", "reason": "project_removed"}`,
		"t-1", 5},
	"delete_document": {`{"collection": "c", "document_id": "uuid-or-path", "point_ids": ["uuid1", "uuid2"]}`,
		"uuid-or-path", 5},
	"rename": {`{"collection": "c", "old_path": "/old/path", "new_path": "/new/path", "is_folder": false}`,
		"/old/path:/new/path", 5},
}

func TestSeed001OpsMatrix(t *testing.T) {
	set := mustLoad(t, seed001File)
	lines := strings.Split(strings.TrimSpace(seed001Matrix), "\n")
	ops := splitRow(lines[0])[1:]
	rows := lines[2:]
	if len(rows) != 8 || len(ops) != 4 {
		t.Fatalf("matrix is %d×%d, want 8×4", len(rows), len(ops))
	}
	for _, line := range rows {
		cells := splitRow(line)
		kind, item := cells[0], seed001Items[cells[0]]
		var allowed []string
		for i, op := range ops {
			if cells[i+1] == "Y" {
				allowed = append(allowed, op)
			}
		}
		for i, op := range ops {
			t.Run(kind+"/"+op, func(t *testing.T) {
				spec := Spec{Kind: kind, Op: op, Tenant: "tenant-1", Payload: json.RawMessage(item.payload)}
				if cells[i+1] == "N" {
					want := fmt.Sprintf("op: %q is not allowed for kind %q (allowed: %s)", op, kind, strings.Join(allowed, ", "))
					if got := applyErr(t, set, spec); got != want {
						t.Errorf("got %s\nwant %s", got, want)
					}
					return
				}
				r := mustApply(t, set, spec)
				// The seed's key: {item_type}:{collection}:{identifier_hash}.
				wantKey := kind + ":c:" + h16(item.hashed)
				if r.IdempotencyKey != wantKey || r.UniquePolicy != PolicyActive {
					t.Errorf("key %q policy %q, want %q active", r.IdempotencyKey, r.UniquePolicy, wantKey)
				}
				if r.Priority != item.priority || r.Queue != "unified" || r.MaxRetries != 3 || r.Lease != 5*time.Minute {
					t.Errorf("resolved %+v, want priority %d in queue unified, 3 retries, 5m lease", r, item.priority)
				}
			})
		}
	}
}

func splitRow(line string) []string {
	var cells []string
	for _, c := range strings.Split(line, "|") {
		cells = append(cells, strings.TrimSpace(c))
	}
	return cells
}

func TestSeed001Rules(t *testing.T) {
	set := mustLoad(t, seed001File)
	if got := len(set.Kinds()); got != 8 {
		t.Errorf("%d kinds, want 8", got)
	}
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: "processing", Op: "ingest"}, `kind: unknown kind "processing" (strict mode)`},
		{Spec{Kind: "file"}, `op: required for kind "file" (allowed: ingest, update, delete)`},
		{Spec{Kind: "file", Op: "ingest", Payload: json.RawMessage(`{"file_path": "/a"}`)}, `payload.collection: missing property "collection"`},
		{Spec{Kind: "file", Op: "ingest", Payload: json.RawMessage(`{"collection": "c", "file_path": "/a", "size_bytes": -1}`)},
			"payload.size_bytes: must be >= 0"},
		{Spec{Kind: "content", Op: "ingest", Payload: json.RawMessage(`{"collection": "c", "content": "x", "source_type": "fax"}`)},
			`payload.source_type: must be one of "scratchbook", "mcp", "clipboard"`},
		{Spec{Kind: "file", Op: "ingest", Priority: intp(11), Payload: json.RawMessage(`{"collection": "c", "file_path": "/a"}`)},
			"priority: must be between 0 and 10, got 11"},
	}
	for _, tt := range tests {
		if got := applyErr(t, set, tt.spec); got != tt.want {
			t.Errorf("got %s\nwant %s", got, tt.want)
		}
	}
	// A user waiting raises one job's priority; the kind's stays for others.
	r := mustApply(t, set, Spec{Kind: "library", Op: "ingest", Priority: intp(10), Payload: json.RawMessage(seed001Items["library"].payload)})
	if r.Priority != 10 {
		t.Errorf("priority %d, want the job's 10", r.Priority)
	}
}

// seed004Payloads are the seed's examples, one per job type.
var seed004Payloads = map[string]string{
	"transcode": `{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
		"s3_original_path": "videos/original/a1b2c3d4-e5f6-7890-abcd-ef1234567890/master.mp4"}`,
	"sample": `{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
		"s3_original_path": "videos/original/a1b2c3d4-e5f6-7890-abcd-ef1234567890/master.mp4", "target_fps": 10, "dedupe_threshold": 0.95}`,
	"ocr": `{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890", "frame_paths": [
		"frames/a1b2c3d4-e5f6-7890-abcd-ef1234567890/1500.jpg", "frames/a1b2c3d4-e5f6-7890-abcd-ef1234567890/1600.jpg"],
		"languages": ["eng"], "min_confidence": 0.6}`,
	"segment_index": `{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890"}`,
	"clip_generate": `{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890", "clip_id": "clip-xyz-123", "t_start": 1500,
		"t_end": 3000, "padding_ms": 2000, "s3_original_path": "videos/original/a1b2c3d4-e5f6-7890-abcd-ef1234567890/master.mp4"}`,
}

func TestSeed004Uniqueness(t *testing.T) {
	set := mustLoad(t, seed004File)
	const other = "0f0e0d0c-0b0a-4998-8776-655443322110"
	keys := map[string]string{}
	for _, kind := range []string{"transcode", "sample", "ocr", "segment_index"} {
		payload := seed004Payloads[kind]
		first := mustApply(t, set, Spec{Kind: kind, Payload: json.RawMessage(payload)})
		again := mustApply(t, set, Spec{Kind: kind, Payload: json.RawMessage(payload)})
		elsewhere := mustApply(t, set, Spec{Kind: kind,
			Payload: json.RawMessage(strings.ReplaceAll(payload, "a1b2c3d4-e5f6-7890-abcd-ef1234567890", other))})
		if want := kind + "::" + hashVideo; first.IdempotencyKey != want || first.UniquePolicy != PolicyActive {
			t.Errorf("%s: key %q policy %q, want %q active", kind, first.IdempotencyKey, first.UniquePolicy, want)
		}
		if again.IdempotencyKey != first.IdempotencyKey {
			t.Errorf("%s: same video, keys %q and %q differ", kind, first.IdempotencyKey, again.IdempotencyKey)
		}
		if elsewhere.IdempotencyKey == first.IdempotencyKey || elsewhere.IdempotencyKey != kind+"::"+h16(other) {
			t.Errorf("%s: other video got key %q", kind, elsewhere.IdempotencyKey)
		}
		keys[first.IdempotencyKey] = kind
	}
	if len(keys) != 4 {
		t.Errorf("one video's stages share keys: %v", keys)
	}
	for range 2 {
		r := mustApply(t, set, Spec{Kind: "clip_generate", Payload: json.RawMessage(seed004Payloads["clip_generate"])})
		if r.IdempotencyKey != "" || r.UniquePolicy != "" {
			t.Errorf("clip_generate derived key %q policy %q, want none", r.IdempotencyKey, r.UniquePolicy)
		}
	}
}

func TestSeed004Rules(t *testing.T) {
	set := mustLoad(t, seed004File)
	want := Backoff{Type: BackoffExponential, Base: time.Minute, Factor: 3, Jitter: 0.2}
	for kind, payload := range seed004Payloads {
		r := mustApply(t, set, Spec{Kind: kind, Payload: json.RawMessage(payload)})
		if r.MaxRetries != 3 || r.Backoff != want || r.Queue != kind || r.Lease != 5*time.Minute {
			t.Errorf("%s resolved %+v", kind, r)
		}
	}
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: "ocr", Payload: json.RawMessage(`{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890", "frame_paths": "frames/x/1.jpg"}`)},
			"payload.frame_paths: expected array, got string"},
		{Spec{Kind: "transcode", Payload: json.RawMessage(`{"video_id": "abc-123", "s3_original_path": "videos/original/abc-123/master.mp4"}`)},
			"payload.video_id: must be a valid uuid"},
		{Spec{Kind: "transcode", Op: "ingest", Payload: json.RawMessage(seed004Payloads["transcode"])},
			`op: kind "transcode" takes no op, got "ingest"`},
		{Spec{Kind: "sample", Payload: json.RawMessage(`{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
			"s3_original_path": "videos/original/a1b2c3d4-e5f6-7890-abcd-ef1234567890/master.mp4", "dedupe_threshold": 1.5}`)},
			"payload.dedupe_threshold: must be <= 1"},
		{Spec{Kind: "clip_generate", Payload: json.RawMessage(`{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890"}`)},
			`payload.clip_id: missing property "clip_id"`},
		{Spec{Kind: "Transcode"}, `kind: unknown kind "Transcode" (strict mode)`},
	}
	for _, tt := range tests {
		if got := applyErr(t, set, tt.spec); got != tt.want {
			t.Errorf("got %s\nwant %s", got, tt.want)
		}
	}
}
