package contract

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary files. It must never panic or hang, must
// answer the same way twice (no map-order leaks), and every error must be
// a one-line *FileError naming its place. The corpus is in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, path := range []string{seed001File, seed004File} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(contractsExample))
	f.Add([]byte(keyContract))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Parse(data)
		_, again := Parse(data)
		if errText(err) != errText(again) {
			t.Fatalf("Parse is not deterministic:\n%v\n---\n%v", err, again)
		}
		if err != nil {
			if set != nil {
				t.Fatal("Parse returned a Set and an error")
			}
			for _, line := range fileErrors(t, err) {
				if strings.ContainsAny(line, "\r\n") {
					t.Fatalf("error spans lines: %q", line)
				}
			}
			return
		}
		checkSet(t, set)
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// checkSet checks what a parsed Set promises.
func checkSet(t *testing.T, set *Set) {
	t.Helper()
	if _, err := json.Marshal(set.Kinds()); err != nil {
		t.Fatalf("Kinds do not encode: %v", err)
	}
	for _, info := range set.Kinds() {
		k, ok := set.Kind(info.Kind)
		if !ok {
			t.Fatalf("Kinds lists %q but Kind does not find it", info.Kind)
		}
		if k.Priority < MinPriority || k.Priority > MaxPriority || k.MaxRetries < 0 || k.Lease <= 0 || k.Queue == "" {
			t.Fatalf("kind %q resolved out of range: %+v", k.Name, k)
		}
		op := ""
		if len(k.Ops) > 0 {
			op = k.Ops[0]
		}
		// Whatever the schema, Apply answers without panicking.
		_, _ = set.Apply(Spec{Kind: k.Name, Op: op, Payload: json.RawMessage(`{"a": [1, "b", {"c": null}]}`)})
	}
}

// FuzzApply feeds Apply arbitrary jobs against a few contract sets. A job
// is either refused with a *ValidationError naming a job field, or resolved
// within the documented ranges; never both, never a panic.
func FuzzApply(f *testing.F) {
	sets := []*Set{nil}
	for _, src := range []string{rulesContract, keyContract, flowContract} {
		sets = append(sets, mustParse(f, src))
	}
	for _, path := range []string{seed001File, seed004File} {
		set, err := Load(path)
		if err != nil {
			f.Fatal(err)
		}
		sets = append(sets, set)
	}
	f.Add(uint8(0), "x", "", "", "", "", 5, 3, []byte(`{}`))
	f.Add(uint8(1), "file", "ingest", "t", "q", "", 11, -1, []byte(`{"file_path": "/a", "frame_paths": "x"}`))
	f.Add(uint8(2), "mixed", "a", "acme", "", "", 0, 0, []byte(`{"path": "/x", "flag": true, "meta": {"b": [2], "a": 1}}`))
	f.Add(uint8(4), "file", "scan", "", "", "", 5, 3, []byte(`{"collection": "c", "file_path": "/a"}`))
	f.Add(uint8(5), "ocr", "", "", "", "k", 5, 3, []byte(`{"video_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890", "frame_paths": []}`))
	f.Fuzz(func(t *testing.T, which uint8, kind, op, tenant, queue, key string, priority, retries int, payload []byte) {
		set := sets[int(which)%len(sets)]
		spec := Spec{Kind: kind, Op: op, Tenant: tenant, Queue: queue, IdempotencyKey: key,
			Priority: &priority, MaxRetries: &retries, Payload: payload}
		r, err := set.Apply(spec)
		r2, err2 := set.Apply(spec)
		if errText(err) != errText(err2) || r.IdempotencyKey != r2.IdempotencyKey {
			t.Fatalf("Apply is not deterministic: %v / %v, %q / %q", err, err2, r.IdempotencyKey, r2.IdempotencyKey)
		}
		if err != nil {
			checkRefusal(t, err)
			return
		}
		checkResolved(t, spec, r)
	})
}

func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is %T, not *ValidationError", err, err)
	}
	switch ve.Field {
	case "kind", "op", "priority", "max_retries", "payload":
	default:
		if !strings.HasPrefix(ve.Field, "payload.") {
			t.Fatalf("refusal names field %q", ve.Field)
		}
	}
	if ve.Message == "" {
		t.Fatalf("refusal of %s has no message", ve.Field)
	}
}

func checkResolved(t *testing.T, spec Spec, r Resolved) {
	t.Helper()
	if r.Priority < MinPriority || r.Priority > MaxPriority || r.MaxRetries < 0 || r.Queue == "" || r.Lease <= 0 {
		t.Fatalf("resolved out of range: %+v", r)
	}
	var obj map[string]any
	if err := json.Unmarshal(r.Payload, &obj); err != nil || obj == nil {
		t.Fatalf("resolved payload %q is not a JSON object", r.Payload)
	}
	if (r.IdempotencyKey == "") != (r.UniquePolicy == "") {
		t.Fatalf("key %q with policy %q", r.IdempotencyKey, r.UniquePolicy)
	}
	switch {
	case spec.IdempotencyKey != "" && r.IdempotencyKey != spec.IdempotencyKey:
		t.Fatalf("caller key %q lost to %q", spec.IdempotencyKey, r.IdempotencyKey)
	case spec.IdempotencyKey == "" && r.IdempotencyKey != "" && !strings.HasPrefix(r.IdempotencyKey, spec.Kind+":"):
		t.Fatalf("derived key %q does not start with the kind %q", r.IdempotencyKey, spec.Kind)
	}
}
