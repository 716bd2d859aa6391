package contract

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// fencedBlocks returns the bodies of the ```lang blocks of a Markdown file.
func fencedBlocks(t *testing.T, path, lang string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for line := range strings.Lines(string(data)) {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	if cur != nil {
		t.Fatalf("%s: unterminated ```%s block", path, lang)
	}
	return blocks
}

// TestDocsExamplesParse keeps docs/contracts.md honest: every YAML example
// in it is a valid contract file.
func TestDocsExamplesParse(t *testing.T) {
	blocks := fencedBlocks(t, "../docs/contracts.md", "yaml")
	if len(blocks) < 3 {
		t.Fatalf("found %d yaml blocks in docs/contracts.md, want at least 3", len(blocks))
	}
	for i, block := range blocks {
		if _, err := Parse([]byte(block)); err != nil {
			t.Errorf("yaml block %d of docs/contracts.md:\n%s\n%v", i+1, block, err)
		}
	}
}

// TestDocsFirstExampleIsContractsMD checks that the docs' full example
// behaves as the format's specification says.
func TestDocsFirstExampleIsContractsMD(t *testing.T) {
	doc := mustParse(t, fencedBlocks(t, "../docs/contracts.md", "yaml")[0])
	spec := mustParse(t, contractsExample)
	for _, name := range []string{"file", "library"} {
		a, _ := doc.Kind(name)
		b, _ := spec.Kind(name)
		a.schema, b.schema = nil, nil
		if a.Queue != b.Queue || a.Priority != b.Priority || a.Backoff != b.Backoff || a.Timeout != b.Timeout {
			t.Errorf("kind %s: docs %+v, spec %+v", name, a, b)
		}
	}
}

// TestDocsKindsExample checks the GET /v1/kinds example against the kinds
// of the docs' full example.
func TestDocsKindsExample(t *testing.T) {
	var body struct{ Kinds []KindInfo }
	if err := json.Unmarshal([]byte(fencedBlocks(t, "../docs/contracts.md", "json")[0]), &body); err != nil {
		t.Fatal(err)
	}
	doc := mustParse(t, fencedBlocks(t, "../docs/contracts.md", "yaml")[0])
	var file KindInfo
	for _, k := range doc.Kinds() {
		if k.Kind == "file" {
			file = k
		}
	}
	if len(body.Kinds) != 1 || !reflect.DeepEqual(body.Kinds[0], file) {
		t.Errorf("docs show %+v, the example file gives %+v", body.Kinds, file)
	}
}

// TestDocsErrorMessages checks that every error message listed in
// docs/contracts.md is one that the package produces, word for word.
func TestDocsErrorMessages(t *testing.T) {
	blocks := fencedBlocks(t, "../docs/contracts.md", "text")
	if len(blocks) != 2 {
		t.Fatalf("found %d text blocks in docs/contracts.md, want 2 (refused jobs, invalid files)", len(blocks))
	}
	produce := map[string]func() error{}
	for _, c := range append(docRefusals(t), docFileErrors()...) {
		produce[c.msg] = c.run
	}
	for _, block := range blocks {
		for line := range strings.Lines(block) {
			line = strings.TrimSuffix(line, "\n")
			run, ok := produce[line]
			if !ok {
				t.Errorf("docs/contracts.md lists %q, which no case here produces", line)
				continue
			}
			if err := run(); err == nil || err.Error() != line {
				t.Errorf("docs/contracts.md lists\n  %s\nbut the package says\n  %v", line, err)
			}
		}
	}
}

// docCase produces one error message that the docs list.
type docCase struct {
	msg string
	run func() error
}

// docRefusals produces each refusal listed in docs/contracts.md.
func docRefusals(t *testing.T) []docCase {
	rules, keys := mustParse(t, rulesContract), mustParse(t, keyContract)
	apply := func(set *Set, spec Spec) func() error {
		return func() error { _, err := set.Apply(spec); return err }
	}
	file := func(payload string) Spec {
		return Spec{Kind: "file", Op: "ingest", Payload: []byte(payload)}
	}
	return []docCase{
		{"kind: required", apply(nil, Spec{})},
		{`kind: unknown kind "fil" (strict mode)`, apply(rules, Spec{Kind: "fil"})},
		{`op: "scan" is not allowed for kind "file" (allowed: ingest, update, delete)`, apply(rules, Spec{Kind: "file", Op: "scan"})},
		{`op: required for kind "file" (allowed: ingest, update, delete)`, apply(rules, Spec{Kind: "file"})},
		{`op: kind "transcode" takes no op, got "scan"`, apply(rules, Spec{Kind: "transcode", Op: "scan"})},
		{"priority: must be between 0 and 10, got 11", apply(nil, Spec{Kind: "x", Priority: intp(11)})},
		{"max_retries: must be >= 0, got -1", apply(nil, Spec{Kind: "x", MaxRetries: intp(-1)})},
		{"payload: expected object, got array", apply(nil, Spec{Kind: "x", Payload: []byte("[]")})},
		{"payload: invalid JSON: unexpected EOF", apply(nil, Spec{Kind: "x", Payload: []byte(`{"a":`)})},
		{`payload.file_path: missing property "file_path"`, apply(rules, file(`{}`))},
		{"payload.frame_paths: expected array, got string", apply(rules, file(`{"file_path": "/a", "frame_paths": "a"}`))},
		{"payload.size_bytes: must be >= 0", apply(rules, file(`{"file_path": "/a", "size_bytes": -1}`))},
		{"payload.frame_paths.1: expected string, got number", apply(rules, file(`{"file_path": "/a", "frame_paths": ["a", 1]}`))},
		{"payload.video_id: must be a valid uuid", apply(rules, file(`{"file_path": "/a", "video_id": "x"}`))},
		{`payload.source_type: must be one of "scratchbook", "mcp", "clipboard"`, apply(rules, file(`{"file_path": "/a", "source_type": "fax"}`))},
		{`payload.extra: property "extra" is not allowed`, apply(rules, file(`{"file_path": "/a", "extra": 1}`))},
		{`payload.collection: missing property "collection" (kind "file" derives its idempotency key from it)`, apply(keys, file(`{"file_path": "/a"}`))},
	}
}

// docFileErrors produces each file error listed in docs/contracts.md.
func docFileErrors() []docCase {
	parse := func(in string) func() error {
		return func() error { _, err := Parse([]byte(in)); return err }
	}
	return []docCase{
		{"version: required: this format is version 1", parse("kinds: {}\n")},
		{"version: unsupported version 2 (this format is version 1)", parse("version: 2\n")},
		{"kinds.file.priorty: unknown field (allowed: queue, priority, max_retries, lease, timeout, backoff, ops, payload, unique, sql_enqueue)", parse(v1 + "kinds: {file: {priorty: 1}}")},
		{"kinds.file.priority: must be between 0 and 10, got 11", parse(v1 + "kinds: {file: {priority: 11}}")},
		{`defaults.lease: invalid duration "5 minutes" (Go syntax: 300ms, 30s, 5m, 1h30m)`, parse(v1 + "defaults: {lease: 5 minutes}")},
		{"defaults.backoff.factor: must be >= 1, got 0.5", parse(v1 + "defaults: {backoff: {type: exponential, base: 1s, factor: 0.5}}")},
		{`kinds.file.ops[2]: duplicate op "ingest"`, parse(v1 + "kinds: {file: {ops: [ingest, update, ingest]}}")},
		{`kinds.file.payload: invalid JSON Schema: at /properties/size/type: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`, parse(v1 + "kinds: {file: {payload: {properties: {size: {type: int}}}}}")},
		{`kinds.file.payload: invalid JSON Schema: failing loading "https://example.com/s.json": external references are not allowed`, parse(v1 + "kinds: {file: {payload: {$ref: 'https://example.com/s.json'}}}")},
		{`kinds.file.unique.fields[0]: unknown reference "path": use payload.<property>[.<property>...], tenant, queue or op`, parse(v1 + "kinds: {file: {unique: {policy: active, fields: [path]}}}")},
		{"kinds.library.unique.window: required for policy window", parse(v1 + "kinds: {library: {unique: {policy: window, fields: [tenant]}}}")},
		{`line 3, column 1: invalid YAML: mapping key "kinds" already defined at [1:1]`, parse("kinds: {}\nversion: 1\nkinds: {}\n")},
		{"line 1, column 65: nested deeper than 64 levels", parse(strings.Repeat("[", 65))},
	}
}
