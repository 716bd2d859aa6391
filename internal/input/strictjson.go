package input

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// checkEncoding refuses a body that encoding/json would silently change:
// invalid UTF-8 and \u escapes of half a UTF-16 surrogate pair both decode
// to U+FFFD, so a stored value would differ from the one sent. The error
// names the value at fault under prefix.
func checkEncoding(b []byte, prefix string) error {
	if !utf8.Valid(b) {
		off := invalidUTF8(b)
		return invalid(JoinField(prefix, pathAt(b, off)), "is not valid UTF-8 (byte %d of the body)", off)
	}
	if off := loneSurrogate(b); off >= 0 {
		return invalid(JoinField(prefix, pathAt(b, off)),
			"holds %.6s, half of a UTF-16 surrogate pair without its other half (byte %d of the body)", b[off:], off)
	}
	return nil
}

// invalidUTF8 answers the offset of the first byte of b that is not UTF-8.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// loneSurrogate answers the offset of the first \u escape in a JSON string
// of b that is a surrogate without its pair (a high one not followed at
// once by a low one, or a low one alone), or -1.
func loneSurrogate(b []byte) int {
	inString, high := false, -1 // high: offset of a high surrogate awaiting its low one
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			inString = c == '"'
			continue
		}
		r := rune(-1)
		if c == '\\' && i+5 < len(b) && b[i+1] == 'u' {
			if v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16); err == nil {
				r = rune(v)
			}
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			if high < 0 {
				return i
			}
			high = -1
		case high >= 0:
			return high
		case r >= 0xD800 && r <= 0xDBFF:
			high = i
		}
		switch {
		case r >= 0:
			i += 5
		case c == '\\':
			i++ // the escaped character, which may be a quote
		case c == '"':
			inString = false
		}
	}
	return high
}

// pathLevel is one open object or array on the way to a value.
type pathLevel struct {
	obj, wantKey bool
	key          string
	idx          int
}

// pathAt answers the path ("payload.a", "jobs[1].tags[0]") of the value in
// the JSON document b that holds the byte at off; for a byte in a key, the
// object's. It answers "" for the document itself, or when b does not parse.
func pathAt(b []byte, off int) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	var stack []pathLevel
	done := func() { // a value ended: move its container on
		if n := len(stack); n > 0 {
			stack[n-1].wantKey = stack[n-1].obj
			stack[n-1].idx++
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		hit := off < int(dec.InputOffset())
		d, delim := tok.(json.Delim)
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			switch {
			case delim: // '}'
				stack = stack[:n-1]
				done()
			case hit:
				return levelsPath(stack, false)
			default:
				stack[n-1].key, stack[n-1].wantKey = tok.(string), false
			}
			continue
		}
		switch {
		case hit:
			return levelsPath(stack, true)
		case delim && (d == '{' || d == '['):
			stack = append(stack, pathLevel{obj: d == '{', wantKey: d == '{'})
		case delim: // ']'
			stack = stack[:len(stack)-1]
			done()
		default:
			done()
		}
	}
}

// levelsPath writes the path of stack; withLast adds the innermost level's
// current key or index.
func levelsPath(stack []pathLevel, withLast bool) string {
	var sb strings.Builder
	for i, l := range stack {
		if i == len(stack)-1 && !withLast {
			break
		}
		if l.obj {
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(l.key)
		} else {
			fmt.Fprintf(&sb, "[%d]", l.idx)
		}
	}
	return sb.String()
}

// unknownField answers the path of the first key of b, in document order,
// that the Go type t does not declare, and the keys its object may hold.
// Raw JSON fields (payload, metadata, a batch's jobs) end the walk: their
// own decoding checks them.
func unknownField(b []byte, t reflect.Type, path string) (string, []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		dec := json.NewDecoder(bytes.NewReader(b))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return "", nil
		}
		fields := jsonFields(t)
		for dec.More() {
			tok, err := dec.Token()
			var val json.RawMessage
			if err != nil || dec.Decode(&val) != nil {
				return "", nil
			}
			key, _ := tok.(string)
			ft, ok := fieldType(fields, key)
			if !ok {
				names := make([]string, len(fields))
				for i, f := range fields {
					names[i] = f.name
				}
				return JoinField(path, key), names
			}
			if p, names := unknownField(val, ft, JoinField(path, key)); p != "" {
				return p, names
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 { // []byte, json.RawMessage
			return "", nil
		}
		var items []json.RawMessage
		if json.Unmarshal(b, &items) != nil {
			return "", nil
		}
		for i, item := range items {
			if p, names := unknownField(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, names
			}
		}
	}
	return "", nil
}

type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields answers the JSON names of a struct's fields, as encoding/json
// reads them.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonFields(f.Type)...)
			continue
		case name == "":
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: f.Type})
	}
	return out
}

// fieldType finds a key the way encoding/json does: exact name first, then
// without regard to case.
func fieldType(fields []jsonField, key string) (reflect.Type, bool) {
	for _, f := range fields {
		if f.name == key {
			return f.typ, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f.typ, true
		}
	}
	return nil, false
}
