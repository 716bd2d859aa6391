package input

import (
	"errors"
	"testing"
)

// A value of the wrong JSON type is named in JSON's words, whatever Go
// type the field decodes into.
func TestDecodeNamesTheWantedType(t *testing.T) {
	var v struct {
		Error *struct {
			Type string `json:"type"`
		} `json:"error"`
		Tags     []string       `json:"tags"`
		IDs      []int64        `json:"ids"`
		Max      *int           `json:"max"`
		Wait     *float64       `json:"wait"`
		Retry    *bool          `json:"retry"`
		Name     string         `json:"name"`
		Metadata map[string]any `json:"metadata"`
	}
	for _, c := range []struct{ body, field, msg string }{
		{`{"error":"boom"}`, "error", "must be an object, got JSON string"},
		{`{"error":{"type":1}}`, "error.type", "must be a string, got JSON number"},
		{`{"tags":"a"}`, "tags", "must be an array of strings, got JSON string"},
		{`{"ids":{}}`, "ids", "must be an array, got JSON object"},
		{`{"max":"1"}`, "max", "must be an integer, got JSON string"},
		{`{"wait":true}`, "wait", "must be a number, got JSON bool"},
		{`{"retry":"yes"}`, "retry", "must be a boolean, got JSON string"},
		{`{"name":[]}`, "name", "must be a string, got JSON array"},
		{`{"metadata":[]}`, "metadata", "must be an object, got JSON array"},
	} {
		err := Decode([]byte(c.body), "", &v)
		var ie *Error
		if !errors.As(err, &ie) || ie.Field != c.field || ie.Message != c.msg {
			t.Errorf("%s: %v, want %s: %s", c.body, err, c.field, c.msg)
		}
	}
}
