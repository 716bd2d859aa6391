package input

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// KeyValues reads KEY:VALUE pairs into a metadata or payload filter.
// VALUE is taken as JSON when it is JSON (5, true, "5", {"a":1}), its
// numbers as written (a 64-bit id stays itself), else as a string (acme);
// a key may repeat only with the same value.
func KeyValues(pairs []string) (map[string]any, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(pairs))
	for _, pair := range pairs {
		k, v, ok := strings.Cut(pair, ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want KEY:VALUE", pair)
		}
		if strings.ContainsRune(k, '"') {
			return nil, fmt.Errorf("key %q: must not contain '\"'", k)
		}
		var val any = v
		if parsed, ok := jsonValue(v); ok {
			val = parsed
		}
		if old, dup := out[k]; dup {
			a, _ := json.Marshal(old)
			b, _ := json.Marshal(val)
			if string(a) != string(b) {
				return nil, fmt.Errorf("key %q: given twice with different values", k)
			}
		}
		out[k] = val
	}
	return out, nil
}

// jsonValue reads v as one JSON value, its numbers as written.
func jsonValue(v string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var parsed any
	if dec.Decode(&parsed) != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return parsed, true
}
