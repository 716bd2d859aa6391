package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// A contract file is decoded into a small tree before it is checked: *object
// for mappings (keys in file order, so that errors come out in file order),
// []any, string, json.Number, bool and nil. YAML and JSON files produce the
// same tree, so every rule is written once.

// Limits that keep a hostile or broken file from exhausting memory, stack
// or time. A contract file is a few kilobytes; these are far above that.
const (
	// MaxFileSize is the largest contract file Load and Parse accept.
	MaxFileSize = 1 << 20
	// maxDepth bounds nesting. The YAML parser's cost grows with the square
	// of the depth, and a JSON Schema rarely nests past a dozen levels.
	maxDepth = 64
	// maxKeys bounds the keys of one mapping, for the same reason: the
	// YAML parser's cost grows with the square of a mapping's size.
	maxKeys = 1000
	// maxNodes bounds the decoded tree. YAML aliases share one decoded
	// value; walking it would expand "billion laughs" files exponentially.
	maxNodes = 100_000
)

type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

// set adds key and reports false when key is already there.
func (o *object) set(key string, v any) bool {
	if _, dup := o.vals[key]; dup {
		return false
	}
	o.keys = append(o.keys, key)
	o.vals[key] = v
	return true
}

func (o *object) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// budget counts decoded nodes and fails once there are too many.
type budget struct{ nodes int }

func (b *budget) take(depth int) error {
	b.nodes++
	if b.nodes > maxNodes {
		return &FileError{Path: docPath, Message: fmt.Sprintf("more than %d values (YAML aliases count each time they are used)", maxNodes)}
	}
	if depth > maxDepth {
		// The path itself would be 64 segments long; the file is the place.
		return &FileError{Path: docPath, Message: fmt.Sprintf("nested deeper than %d levels", maxDepth)}
	}
	return nil
}

// decodeJSON reads a JSON document into a tree, rejecting duplicate keys
// (encoding/json would silently keep the last one).
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	b := &budget{}
	return b.jsonValue(dec, "", 0)
}

func (b *budget) jsonValue(dec *json.Decoder, path string, depth int) (any, error) {
	if err := b.take(depth); err != nil {
		return nil, err
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, &FileError{Path: orDoc(path), Message: "invalid JSON: " + err.Error()}
	}
	switch tok {
	case json.Delim('{'):
		return b.jsonObject(dec, path, depth)
	case json.Delim('['):
		var list []any
		for i := 0; dec.More(); i++ {
			v, err := b.jsonValue(dec, index(orDoc(path), i), depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	}
	return tok, nil
}

func (b *budget) jsonObject(dec *json.Decoder, path string, depth int) (any, error) {
	obj := newObject()
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		v, err := b.jsonValue(dec, join(path, key), depth+1)
		if err != nil {
			return nil, err
		}
		if !obj.set(key, v) {
			return nil, &FileError{Path: join(path, key), Message: "duplicate key"}
		}
		if len(obj.keys) > maxKeys {
			// YAML has this limit; a JSON file gets the same one.
			return nil, &FileError{Path: join(path, key), Message: fmt.Sprintf("more than %d keys in one mapping", maxKeys)}
		}
	}
	_, err := dec.Token()
	return obj, err
}

// fromYAML converts a value decoded by goccy/go-yaml (with UseOrderedMap)
// into a tree.
func (b *budget) fromYAML(v any, path string, depth int) (any, error) {
	if err := b.take(depth); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case nil, string, bool:
		return v, nil
	case uint64:
		return json.Number(strconv.FormatUint(v, 10)), nil
	case int64:
		return json.Number(strconv.FormatInt(v, 10)), nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, &FileError{Path: orDoc(path), Message: "not a finite number"}
		}
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64)), nil
	case []any:
		list := make([]any, len(v))
		for i, item := range v {
			c, err := b.fromYAML(item, index(orDoc(path), i), depth+1)
			if err != nil {
				return nil, err
			}
			list[i] = c
		}
		return list, nil
	case yamlMap:
		return b.fromYAMLMap(v, path, depth)
	}
	return nil, &FileError{Path: orDoc(path), Message: fmt.Sprintf("unsupported YAML value of type %T", v)}
}

func (b *budget) fromYAMLMap(m yamlMap, path string, depth int) (any, error) {
	obj := newObject()
	for _, item := range m {
		key, ok := yamlKey(item.Key)
		if !ok {
			return nil, &FileError{Path: orDoc(path), Message: fmt.Sprintf("mapping key %v is not a string", item.Key)}
		}
		v, err := b.fromYAML(item.Value, join(path, key), depth+1)
		if err != nil {
			return nil, err
		}
		if !obj.set(key, v) {
			return nil, &FileError{Path: join(path, key), Message: "duplicate key"}
		}
	}
	return obj, nil
}

// yamlKey accepts scalar keys as their text: `200:` in a schema's
// properties means the property "200", as it would in JSON.
func yamlKey(k any) (string, bool) {
	switch k := k.(type) {
	case string:
		return k, true
	case uint64:
		return strconv.FormatUint(k, 10), true
	case int64:
		return strconv.FormatInt(k, 10), true
	case bool:
		return strconv.FormatBool(k), true
	}
	return "", false
}

func orDoc(path string) string {
	if path == "" {
		return docPath
	}
	return path
}

// plain converts a tree into the values encoding/json would produce
// (map[string]any for objects), which the JSON Schema compiler takes.
func plain(v any) any {
	switch v := v.(type) {
	case *object:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			m[k] = plain(v.vals[k])
		}
		return m
	case []any:
		list := make([]any, len(v))
		for i, item := range v {
			list[i] = plain(item)
		}
		return list
	}
	return v
}

// typeName names a tree or JSON value's type in error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case *object, map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
