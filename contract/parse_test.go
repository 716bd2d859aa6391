package contract

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fileErrors flattens a Parse error into "PATH: MESSAGE" lines, failing the
// test if any part is not a *FileError naming its place.
func fileErrors(t *testing.T, err error) []string {
	t.Helper()
	var parts []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
	} else {
		parts = []error{err}
	}
	var lines []string
	for _, e := range parts {
		var fe *FileError
		if !errors.As(e, &fe) {
			t.Fatalf("error %q (%T) is not a *FileError", e, e)
		}
		if fe.Path == "" || fe.Message == "" {
			t.Fatalf("FileError %+v lacks a path or message", fe)
		}
		lines = append(lines, fe.Error())
	}
	return lines
}

const v1 = "version: 1\n"

func TestParseStructureErrors(t *testing.T) {
	tests := []parseCase{
		{"missing version", "strict: false\n", []string{"version: required: this format is version 1"}},
		{"empty file", "", []string{"version: required: this format is version 1"}},
		{"version 2", "version: 2\n", []string{"version: unsupported version 2 (this format is version 1)"}},
		{"version string", "version: '1'\n", []string{"version: expected number, got string"}},
		{"unknown top key", v1 + "kind: {}\n", []string{"kind: unknown field (allowed: version, strict, defaults, kinds, x-...)"}},
		{"strict not bool", v1 + "strict: yes\n", []string{"strict: expected boolean, got string"}},
		{"sql_enqueue not bool", v1 + "kinds: {file: {sql_enqueue: 1}}\n", []string{"kinds.file.sql_enqueue: expected boolean, got number"}},
		{"strict without kinds", v1 + "strict: true\n", []string{"kinds: strict mode needs at least one kind; every job would be rejected"}},
		{"document not object", "- a\n- b\n", []string{"document: expected object, got array"}},
		{"unknown kind key", v1 + "kinds:\n  file:\n    priorty: 5\n", []string{
			"kinds.file.priorty: unknown field (allowed: queue, priority, max_retries, lease, timeout, backoff, ops, payload, unique, sql_enqueue)"}},
		{"unknown defaults key", v1 + "defaults: {ops: [a]}\n", []string{
			"defaults.ops: unknown field (allowed: queue, priority, max_retries, lease, timeout, backoff)"}},
		{"defaults not object", v1 + "defaults: [1]\n", []string{"defaults: expected object, got array"}},
		{"kinds not object", v1 + "kinds: [file]\n", []string{"kinds: expected object, got array"}},
		{"kind not object", v1 + "kinds: {file: 3}\n", []string{"kinds.file: expected object, got number"}},
		{"kind name", v1 + "kinds: {'a b': {}, 'x:y': {}}\n", []string{
			`kinds["a b"]: invalid kind name "a b": use 1 to 128 letters, digits, '_', '.' or '-'`,
			`kinds["x:y"]: invalid kind name "x:y": use 1 to 128 letters, digits, '_', '.' or '-'`}},
		{"dotted kind path", v1 + "kinds: {a.b: {priorty: 1}}\n", []string{
			`kinds["a.b"].priorty: unknown field (allowed: queue, priority, max_retries, lease, timeout, backoff, ops, payload, unique, sql_enqueue)`}},
	}
	runParseErrors(t, tests)
}

func TestParseSettingErrors(t *testing.T) {
	tests := []parseCase{
		{"queue name", v1 + "kinds: {file: {queue: 'in gest'}}\n", []string{
			`kinds.file.queue: invalid name "in gest": use 1 to 128 letters, digits, '_', '.' or '-'`}},
		{"priority range", v1 + "kinds: {file: {priority: 11}}\n", []string{"kinds.file.priority: must be between 0 and 10, got 11"}},
		{"priority negative", v1 + "defaults: {priority: -1}\n", []string{"defaults.priority: must be between 0 and 10, got -1"}},
		{"priority fraction", v1 + "kinds: {file: {priority: 2.5}}\n", []string{"kinds.file.priority: expected integer, got 2.5"}},
		{"priority string", v1 + "kinds: {file: {priority: high}}\n", []string{"kinds.file.priority: expected number, got string"}},
		{"max_retries negative", v1 + "kinds: {file: {max_retries: -1}}\n", []string{"kinds.file.max_retries: must be >= 0, got -1"}},
		{"max_retries huge", v1 + "kinds: {file: {max_retries: 3000000000}}\n", []string{"kinds.file.max_retries: must be <= 2147483647, got 3000000000"}},
		{"duration syntax", v1 + "defaults: {lease: 5 minutes}\n", []string{
			`defaults.lease: invalid duration "5 minutes" (Go syntax: 300ms, 30s, 5m, 1h30m)`}},
		{"duration days", v1 + "defaults: {timeout: 1d}\n", []string{
			`defaults.timeout: invalid duration "1d" (Go syntax: 300ms, 30s, 5m, 1h30m)`}},
		{"duration number", v1 + "defaults: {lease: 300}\n", []string{
			`defaults.lease: expected duration string such as "30s" or "5m", got number`}},
		{"lease zero", v1 + "kinds: {file: {lease: 0s}}\n", []string{"kinds.file.lease: must be greater than 0"}},
		{"timeout negative", v1 + "kinds: {file: {timeout: -1s}}\n", []string{"kinds.file.timeout: must not be negative, got -1s"}},
		{"ops empty", v1 + "kinds: {file: {ops: []}}\n", []string{
			"kinds.file.ops: must list at least one op (leave ops out for a kind whose jobs carry none)"}},
		{"ops not list", v1 + "kinds: {file: {ops: ingest}}\n", []string{"kinds.file.ops: expected array, got string"}},
		{"ops items", v1 + "kinds: {file: {ops: [ingest, '', ingest, 3]}}\n", []string{
			`kinds.file.ops[1]: invalid name "": use 1 to 128 letters, digits, '_', '.' or '-'`,
			`kinds.file.ops[2]: duplicate op "ingest"`,
			"kinds.file.ops[3]: expected string, got number"}},
		{"json: error paths match yaml", `{"version": 1, "kinds": {"file": {"priority": 11, "ops": []}}}`, []string{
			"kinds.file.priority: must be between 0 and 10, got 11",
			"kinds.file.ops: must list at least one op (leave ops out for a kind whose jobs carry none)"}},
	}
	runParseErrors(t, tests)
}

// parseCase is a file that Parse must refuse with exactly these errors.
type parseCase struct {
	name string
	in   string
	want []string
}

func runParseErrors(t *testing.T, tests []parseCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse succeeded, want %q", tt.want)
			}
			if set != nil {
				t.Errorf("Parse returned a Set with an error")
			}
			if got := fileErrors(t, err); !slices.Equal(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestParseAllProblemsAtOnce(t *testing.T) {
	in := "version: 2\nfoo: 1\nkinds:\n  file:\n    priorty: 5\n    priority: 11\n  lib:\n    unique: {policy: window, fields: [payload.name]}\n"
	got := fileErrors(t, mustFail(t, in))
	want := []string{
		"version: unsupported version 2 (this format is version 1)",
		"foo: unknown field (allowed: version, strict, defaults, kinds, x-...)",
		"kinds.file.priorty: unknown field (allowed: queue, priority, max_retries, lease, timeout, backoff, ops, payload, unique, sql_enqueue)",
		"kinds.file.priority: must be between 0 and 10, got 11",
		"kinds.lib.unique.window: required for policy window",
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
}

func mustFail(t *testing.T, in string) error {
	t.Helper()
	_, err := Parse([]byte(in))
	if err == nil {
		t.Fatalf("Parse(%q) succeeded", in)
	}
	return err
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(v1+"kinds: {email: {}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := Load(good)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if _, ok := set.Kind("email"); !ok {
		t.Errorf("kind email missing")
	}

	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want an os.ErrNotExist error", err)
	}

	big := filepath.Join(dir, "big.yaml")
	data := []byte(v1 + "# " + strings.Repeat("x", MaxFileSize) + "\n")
	if err := os.WriteFile(big, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(big)
	want := []string{"document: larger than 1048576 bytes"}
	if got := fileErrors(t, err); !slices.Equal(got, want) {
		t.Errorf("Load(big) = %q, want %q", got, want)
	}
}

// TestSQLEnqueueAndSchema: a kind says whether it checks a payload schema
// and whether SQL may enqueue it; the defaults of undeclared kinds are the
// file's.
func TestSQLEnqueueAndSchema(t *testing.T) {
	set := mustParse(t, v1+"defaults: {queue: bulk, max_retries: 7}\nkinds:\n  a: {payload: {type: object}, sql_enqueue: true}\n  b: {}\n")
	a, _ := set.Kind("a")
	b, _ := set.Kind("b")
	if !a.HasSchema() || !a.SQLEnqueue || b.HasSchema() || b.SQLEnqueue {
		t.Fatalf("a: schema %v sql %v; b: schema %v sql %v", a.HasSchema(), a.SQLEnqueue, b.HasSchema(), b.SQLEnqueue)
	}
	if d := set.Defaults(); d.Queue != "bulk" || d.Priority != DefaultPriority || d.MaxRetries != 7 {
		t.Fatalf("defaults %+v", d)
	}
	var none *Set
	if d := none.Defaults(); d.Queue != DefaultQueue || d.MaxRetries != DefaultMaxRetries {
		t.Fatalf("nil set's defaults %+v", d)
	}
}
