package contract

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestParseBackoffErrors(t *testing.T) {
	runParseErrors(t, []parseCase{
		{"type missing", v1 + "defaults: {backoff: {factor: 2}}\n", []string{"defaults.backoff.type: required: exponential or fixed"}},
		{"type unknown", v1 + "defaults: {backoff: {type: linear}}\n", []string{`defaults.backoff.type: must be exponential or fixed, got "linear"`}},
		{"not object", v1 + "defaults: {backoff: 30s}\n", []string{"defaults.backoff: expected object, got string"}},
		{"exponential bounds", v1 + "defaults: {backoff: {type: exponential, base: 1m, factor: 0.5, max: 30s, jitter: 1.5}}\n", []string{
			"defaults.backoff.factor: must be >= 1, got 0.5",
			"defaults.backoff.max: must be >= base (1m0s), got 30s",
			"defaults.backoff.jitter: must be between 0 and 1, got 1.5"}},
		{"exponential required", v1 + "kinds: {f: {backoff: {type: exponential}}}\n", []string{
			"kinds.f.backoff.base: required",
			"kinds.f.backoff.factor: required for exponential backoff"}},
		{"exponential base zero", v1 + "kinds: {f: {backoff: {type: exponential, base: 0s, factor: 2}}}\n", []string{
			"kinds.f.backoff.base: must be greater than 0"}},
		{"exponential takes no delay", v1 + "kinds: {f: {backoff: {type: exponential, base: 1s, factor: 2, delay: 3s}}}\n", []string{
			"kinds.f.backoff.delay: unknown field for exponential backoff (allowed: type, base, factor, max, jitter)"}},
		{"fixed", v1 + "kinds: {f: {backoff: {type: fixed, base: 1s, jitter: -0.1}}}\n", []string{
			"kinds.f.backoff.base: unknown field for fixed backoff (allowed: type, delay, jitter)",
			"kinds.f.backoff.delay: required",
			"kinds.f.backoff.jitter: must be between 0 and 1, got -0.1"}},
	})
}

func TestParsePayloadErrors(t *testing.T) {
	runParseErrors(t, []parseCase{
		{"bad type", v1 + "kinds: {file: {payload: {type: object, properties: {size: {type: int}}}}}\n", []string{
			`kinds.file.payload: invalid JSON Schema: at /properties/size/type: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`}},
		{"bad keyword value", v1 + "kinds: {file: {payload: {minProperties: -1}}}\n", []string{
			"kinds.file.payload: invalid JSON Schema: at /minProperties: must be >= 0"}},
		{"not a schema", v1 + "kinds: {file: {payload: [1]}}\n", []string{
			"kinds.file.payload: invalid JSON Schema: at /: expected boolean or object, got array"}},
		{"bad regex", v1 + "kinds: {file: {payload: {pattern: '(('}}}\n", []string{
			"kinds.file.payload: invalid JSON Schema: at /pattern: must be a valid regex: error parsing regexp: missing closing ): `((`"}},
		{"remote ref", v1 + "kinds: {file: {payload: {$ref: 'https://example.com/s.json'}}}\n", []string{
			`kinds.file.payload: invalid JSON Schema: failing loading "https://example.com/s.json": external references are not allowed`}},
		{"file ref", v1 + "kinds: {file: {payload: {$ref: 'file:///etc/passwd'}}}\n", []string{
			`kinds.file.payload: invalid JSON Schema: failing loading "file:///etc/passwd": external references are not allowed`}},
		{"relative ref", v1 + "kinds: {file: {payload: {$ref: 'other.json'}}}\n", []string{
			`kinds.file.payload: invalid JSON Schema: failing loading "https://contracts.skiplock.invalid/kinds/file/other.json": external references are not allowed`}},
		{"remote metaschema", v1 + "kinds: {file: {payload: {properties: {a: {$schema: 'https://example.com/meta'}}}}}\n", []string{
			`kinds.file.payload: invalid JSON Schema: failing loading "https://example.com/meta": external references are not allowed`}},
		{"other draft", v1 + "kinds: {file: {payload: {$schema: 'http://json-schema.org/draft-07/schema#'}}}\n", []string{
			`kinds.file.payload.$schema: must be "https://json-schema.org/draft/2020-12/schema" (only draft 2020-12 is supported), got http://json-schema.org/draft-07/schema#`}},
	})
}

func TestParseUniqueErrors(t *testing.T) {
	runParseErrors(t, []parseCase{
		{"policy unknown", v1 + "kinds: {file: {unique: {policy: always, fields: [payload.a]}}}\n", []string{
			`kinds.file.unique.policy: must be active or window, got "always"`}},
		{"policy and fields missing", v1 + "kinds: {file: {unique: {}}}\n", []string{
			"kinds.file.unique.policy: required: active or window",
			"kinds.file.unique.fields: required: the references whose values identify a job"}},
		{"window missing", v1 + "kinds: {lib: {unique: {policy: window, fields: [payload.a]}}}\n", []string{
			"kinds.lib.unique.window: required for policy window"}},
		{"window with active", v1 + "kinds: {lib: {unique: {policy: active, window: 1h, fields: [payload.a]}}}\n", []string{
			"kinds.lib.unique.window: only used with policy window"}},
		{"window zero", v1 + "kinds: {lib: {unique: {policy: window, window: 0s, fields: [payload.a]}}}\n", []string{
			"kinds.lib.unique.window: must be greater than 0"}},
		{"fields empty", v1 + "kinds: {file: {unique: {policy: active, fields: []}}}\n", []string{
			"kinds.file.unique.fields: must list at least one field"}},
		{"unknown key", v1 + "kinds: {file: {unique: {policy: active, fields: [tenant], key: x}}}\n", []string{
			"kinds.file.unique.key: unknown field (allowed: policy, window, scope, fields)"}},
		{"bad references", v1 + "kinds: {file: {unique: {policy: active, fields: [path, payload., payload, payload.a..b, 7, op]}}}\n", []string{
			`kinds.file.unique.fields[0]: unknown reference "path": use payload.<property>[.<property>...], tenant, queue or op`,
			`kinds.file.unique.fields[1]: invalid reference "payload.": empty property name`,
			"kinds.file.unique.fields[2]: reference a property of the payload: payload.<property>",
			`kinds.file.unique.fields[3]: invalid reference "payload.a..b": empty property name`,
			"kinds.file.unique.fields[4]: expected string, got number",
			`kinds.file.unique.fields[5]: "op" is never set on a kind without ops`}},
		{"duplicate scope", v1 + "kinds: {file: {unique: {policy: active, scope: [tenant, tenant], fields: [payload.a]}}}\n", []string{
			`kinds.file.unique.scope[1]: duplicate reference "tenant"`}},
		{"scope not list", v1 + "kinds: {file: {unique: {policy: active, scope: tenant, fields: [payload.a]}}}\n", []string{
			"kinds.file.unique.scope: expected array, got string"}},
	})
}

// contractsExample is the example of shared/CONTRACTS.md.
const contractsExample = `
version: 1
strict: true
defaults:
  queue: default
  priority: 5
  max_retries: 3
  lease: 5m
  timeout: 30m
  backoff: {type: exponential, base: 60s, factor: 3, max: 6h, jitter: 0.2}
kinds:
  file:
    queue: ingest
    priority: 5
    ops: [ingest, update, delete]
    payload:
      type: object
      required: [file_path, collection]
      properties:
        file_path: {type: string, minLength: 1}
        collection: {type: string}
        size_bytes: {type: integer, minimum: 0}
    unique:
      policy: active
      scope: [payload.collection]
      fields: [payload.file_path]
  library:
    priority: 1
    ops: [ingest, update, delete]
    payload:
      type: object
      required: [library_name, library_version]
    unique:
      policy: window
      window: 24h
      fields: [payload.library_name, payload.library_version]
`

func mustParse(t testing.TB, in string) *Set {
	t.Helper()
	set, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return set
}

func TestParseResolvesKinds(t *testing.T) {
	set := mustParse(t, contractsExample)
	if !set.Strict {
		t.Errorf("Strict = false")
	}
	backoff := Backoff{Type: BackoffExponential, Base: time.Minute, Factor: 3, Max: 6 * time.Hour, Jitter: 0.2}
	file, _ := set.Kind("file")
	file.schema = nil
	wantFile := Kind{Name: "file", Queue: "ingest", Priority: 5, MaxRetries: 3, Lease: 5 * time.Minute,
		Timeout: 30 * time.Minute, Backoff: backoff, Ops: []string{"ingest", "update", "delete"},
		Unique: &Unique{Policy: PolicyActive, Scope: []string{"payload.collection"}, Fields: []string{"payload.file_path"}}}
	if !reflect.DeepEqual(*file, wantFile) {
		t.Errorf("file:\n got %+v\nwant %+v", *file, wantFile)
	}
	lib, _ := set.Kind("library")
	if lib.Queue != "default" || lib.Priority != 1 || lib.Timeout != 30*time.Minute || lib.Backoff != backoff {
		t.Errorf("library did not take the defaults: %+v", lib)
	}
	if lib.Unique.Policy != PolicyWindow || lib.Unique.Window != 24*time.Hour {
		t.Errorf("library unique = %+v", lib.Unique)
	}
	if _, ok := set.Kind("File"); ok {
		t.Errorf("kind names must be case-sensitive")
	}
	// Kind returns a copy.
	file.Ops[0] = "changed"
	if again, _ := set.Kind("file"); again.Ops[0] != "ingest" {
		t.Errorf("Kind exposed the Set's own slice")
	}
}

func TestParseJSONEqualsYAML(t *testing.T) {
	yamlSet := mustParse(t, contractsExample)
	jsonSet := mustParse(t, `{"version": 1, "strict": true,
	  "defaults": {"queue": "default", "priority": 5, "max_retries": 3, "lease": "5m", "timeout": "30m",
	    "backoff": {"type": "exponential", "base": "60s", "factor": 3, "max": "6h", "jitter": 0.2}},
	  "kinds": {
	    "file": {"queue": "ingest", "priority": 5, "ops": ["ingest", "update", "delete"],
	      "payload": {"type": "object", "required": ["file_path", "collection"], "properties": {
	        "file_path": {"type": "string", "minLength": 1}, "collection": {"type": "string"},
	        "size_bytes": {"type": "integer", "minimum": 0}}},
	      "unique": {"policy": "active", "scope": ["payload.collection"], "fields": ["payload.file_path"]}},
	    "library": {"priority": 1, "ops": ["ingest", "update", "delete"],
	      "payload": {"type": "object", "required": ["library_name", "library_version"]},
	      "unique": {"policy": "window", "window": "24h", "fields": ["payload.library_name", "payload.library_version"]}}}}`)
	if !reflect.DeepEqual(yamlSet.Kinds(), jsonSet.Kinds()) {
		t.Errorf("Kinds differ:\nyaml %+v\njson %+v", yamlSet.Kinds(), jsonSet.Kinds())
	}
	for _, name := range []string{"file", "library"} {
		y, _ := yamlSet.Kind(name)
		j, _ := jsonSet.Kind(name)
		y.schema, j.schema = nil, nil
		if !reflect.DeepEqual(y, j) {
			t.Errorf("kind %s differs:\nyaml %+v\njson %+v", name, y, j)
		}
	}
}

func TestKindsJSON(t *testing.T) {
	got, err := json.Marshal(map[string]any{"kinds": mustParse(t, contractsExample+"  email:\n    ops: [send]\n").Kinds()})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kinds":[` +
		`{"kind":"email","queue":"default","priority":5,"max_retries":3,"ops":["send"],"unique":null},` +
		`{"kind":"file","queue":"ingest","priority":5,"max_retries":3,"ops":["ingest","update","delete"],` +
		`"unique":{"policy":"active","window":"","scope":["payload.collection"],"fields":["payload.file_path"]}},` +
		`{"kind":"library","queue":"default","priority":1,"max_retries":3,"ops":["ingest","update","delete"],` +
		`"unique":{"policy":"window","window":"24h","scope":[],"fields":["payload.library_name","payload.library_version"]}}]}`
	if string(got) != want {
		t.Errorf("GET /v1/kinds body:\n got %s\nwant %s", got, want)
	}
	var none *Set
	if got, _ := json.Marshal(none.Kinds()); string(got) != "[]" {
		t.Errorf("nil Set Kinds = %s, want []", got)
	}
	noOps, _ := json.Marshal(mustParse(t, v1+"kinds: {a: {}}\n").Kinds())
	if string(noOps) != `[{"kind":"a","queue":"default","priority":5,"max_retries":3,"ops":[],"unique":null}]` {
		t.Errorf("kind without ops: %s", noOps)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour: "24h", 90 * time.Minute: "1h30m", 30 * time.Second: "30s",
		time.Hour + time.Second: "1h0m1s", 1500 * time.Millisecond: "1.5s", 10 * time.Minute: "10m",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
