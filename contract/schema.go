package contract

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// draft202012 is the only $schema a payload schema may name.
const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// noLoader refuses every URL, so that a contract file can never make the
// server read a file or the network: a payload schema must be
// self-contained ($ref to its own $defs only).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("external references are not allowed")
}

// compileSchema compiles a kind's payload schema as JSON Schema draft
// 2020-12, with format assertions on (draft 2020-12 only annotates formats
// by default, which surprises anyone who writes `format: uuid`).
func (p *problems) compileSchema(kind string, v any, path string) *jsonschema.Schema {
	if obj, ok := v.(*object); ok {
		if s, given := obj.get("$schema"); given && strings.TrimSuffix(fmt.Sprint(s), "#") != draft202012 {
			p.add(join(path, "$schema"), "must be %q (only draft 2020-12 is supported), got %v", draft202012, s)
			return nil
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	// A URL with a path makes relative $refs resolve to a URL the loader
	// refuses, instead of to the schema itself.
	url := "https://contracts.skiplock.invalid/kinds/" + kind + "/payload.json"
	if err := c.AddResource(url, plain(v)); err != nil {
		p.add(path, "invalid JSON Schema: %v", err)
		return nil
	}
	sch, err := c.Compile(url)
	if err != nil {
		p.add(path, "invalid JSON Schema: %s", schemaError(err, url))
		return nil
	}
	return sch
}

// schemaError shortens a compile error to one line.
func schemaError(err error, url string) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		if ve, ok := sve.Err.(*jsonschema.ValidationError); ok {
			parts, msg := deepest(ve)
			return "at /" + strings.Join(parts, "/") + ": " + msg
		}
	}
	msg := strings.ReplaceAll(err.Error(), url, "payload")
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// payloadError turns a validation failure into a ValidationError naming the
// deepest failing field, e.g. payload.frame_paths: expected array, got
// string.
func payloadError(err error) *ValidationError {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return invalid("payload", "%v", err)
	}
	parts, msg := deepest(ve)
	return invalid(strings.Join(append([]string{"payload"}, parts...), "."), "%s", msg)
}

// deepest picks, among the leaves of a validation error tree, the one at
// the deepest location; ties go to the smaller location, so that the
// answer does not depend on the validator's map order, then to the first
// found.
func deepest(ve *jsonschema.ValidationError) (loc []string, msg string) {
	best := -1
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		parts, m := describe(e)
		if len(parts) > best || len(parts) == best && slices.Compare(parts, loc) < 0 {
			best, loc, msg = len(parts), parts, m
		}
	}
	walk(ve)
	return loc, msg
}
