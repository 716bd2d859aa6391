package contract

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseDocumentErrors(t *testing.T) {
	runParseErrors(t, []parseCase{
		{"yaml syntax", "version: 1\n  bad: [\n", []string{
			"line 1, column 10: invalid YAML: mapping value is not allowed in this context"}},
		{"yaml duplicate key", "version: 1\nkinds: {}\nkinds: {}\n", []string{
			`line 3, column 1: invalid YAML: mapping key "kinds" already defined at [2:1]`}},
		{"json duplicate key", `{"version": 1, "kinds": {"file": {"queue": "a", "queue": "b"}}}`, []string{
			"kinds.file.queue: duplicate key"}},
		{"two documents", "version: 1\n---\nversion: 1\n", []string{
			"document: holds several YAML documents; a contract file is one"}},
		{"infinity", v1 + "defaults: {backoff: {type: exponential, base: 1s, factor: .inf}}\n", []string{
			"defaults.backoff.factor: not a finite number"}},
		{"binary", v1 + "kinds: {a: {queue: !!binary aGVsbG8=}}\n", []string{
			"kinds.a.queue: unsupported YAML value of type []uint8"}},
		{"too large", v1 + "# " + strings.Repeat("x", MaxFileSize), []string{
			"document: larger than 1048576 bytes"}},
		{"deep block nesting", strings.Repeat("- ", 100) + "x\n", []string{
			"line 1, column 129: nested deeper than 64 levels"}},
		{"deep flow nesting", strings.Repeat("[", 100) + strings.Repeat("]", 100), []string{
			"document: nested deeper than 64 levels"}},
		{"deep unclosed flow", strings.Repeat("[", 200_000), []string{
			"line 1, column 65: nested deeper than 64 levels"}},
		{"deep mapping nesting", strings.Repeat("a: ", 100) + "x\n", []string{
			"line 1, column 193: nested deeper than 64 levels"}},
		{"deep flow in block", v1 + `x: ` + strings.Repeat("[", 70) + strings.Repeat("]", 70), []string{
			"line 2, column 67: nested deeper than 64 levels"}},
		{"deep json document", `{"version": 1, "x": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, []string{
			"document: nested deeper than 64 levels"}},
		{"too many keys", manyKeys(1000, false), []string{
			"line 1001, column 1: more than 1000 keys in one mapping"}},
		{"too many flow keys", manyKeys(1001, true), []string{
			"line 2, column 8897: more than 1000 keys in one mapping"}},
		{"too many json keys", `{"version": 1, "x": {` + jsonKeys(1001) + `}}`, []string{
			"x.k1000: more than 1000 keys in one mapping"}},
		{"billion laughs", laughs(), []string{
			"document: more than 100000 values (YAML aliases count each time they are used)"}},
	})
}

func jsonKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d": 1`, i)
	}
	return strings.Join(keys, ", ")
}

// laughs builds a YAML file whose aliases expand to 10^12 values.
func laughs() string {
	var b strings.Builder
	b.WriteString(v1 + "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestHostileInputIsFast(t *testing.T) {
	// Each of these once took the YAML parser minutes or all memory.
	for name, in := range map[string]string{
		"unclosed flow": strings.Repeat("[", MaxFileSize),
		"dashes":        strings.Repeat("- ", MaxFileSize/2),
		"keys":          strings.Repeat("a: ", MaxFileSize/3),
		"siblings":      manyKeys(100_000, false)[:MaxFileSize],
		"flow siblings": manyKeys(150_000, true)[:MaxFileSize],
		"laughs":        laughs(),
	} {
		start := time.Now()
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%s: Parse succeeded", name)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: Parse took %v", name, d)
		}
	}
}

func TestYAMLAliasesWithinLimits(t *testing.T) {
	set := mustParse(t, v1+`
x-shared: &shared {type: object, required: [id], properties: {id: {type: string}}}
kinds:
  a: {payload: *shared}
  b: {payload: *shared}
`)
	for _, kind := range []string{"a", "b"} {
		_, err := set.Apply(Spec{Kind: kind, Payload: []byte(`{"id": 7}`)})
		if err == nil || err.Error() != "payload.id: expected string, got number" {
			t.Errorf("kind %s: Apply = %v, want the shared schema to apply", kind, err)
		}
	}
}

// manyKeys writes n block keys (or, with flow, one flow mapping of n keys)
// under a version line.
func manyKeys(n int, flow bool) string {
	var b strings.Builder
	b.WriteString(v1)
	if flow {
		b.WriteString("x-f: {")
	}
	for i := range n {
		if flow {
			fmt.Fprintf(&b, "k%d: 1, ", i)
		} else {
			fmt.Fprintf(&b, "x-k%d: 1\n", i)
		}
	}
	if flow {
		b.WriteString("}\n")
	}
	return b.String()
}

func TestYAMLShapeAcceptsRealFiles(t *testing.T) {
	var indentless strings.Builder
	indentless.WriteString(v1)
	for i := range 500 {
		fmt.Fprintf(&indentless, "x-%d:\n- a\n- b\n", i)
	}
	var deep strings.Builder
	deep.WriteString(v1 + "x-deep:\n")
	for d := 1; d <= 30; d++ {
		fmt.Fprintf(&deep, "%s- k%d:\n", strings.Repeat("  ", d), d)
	}
	for name, in := range map[string]string{
		"indentless sequences": indentless.String(),
		"61 levels":            deep.String(),
		"999 keys and version": manyKeys(999, false),
		"1000 flow keys":       manyKeys(1000, true),
		"long sequence":        v1 + "x-l:\n" + strings.Repeat("- a\n", 5000),
	} {
		if _, err := Parse([]byte(in)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
