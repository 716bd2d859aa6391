package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxJSONDepth bounds the nesting of stored JSON: databases refuse (or
// overflow their stack on) very deep documents.
const MaxJSONDepth = 200

// Decode decodes one JSON object into v; errors name the field, under
// prefix (e.g. "jobs[3]"). It is strict: a key that v does not declare,
// invalid UTF-8 and a lone UTF-16 surrogate are refused, not dropped or
// replaced.
func Decode(b []byte, prefix string, v any) error {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return invalid(prefix, "must be a JSON object")
	}
	if err := checkEncoding(b, prefix); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return unknownFieldError(b, prefix, v, name)
		}
		return jsonError(prefix, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid(prefix, "unexpected data after the JSON object")
	}
	return nil
}

// unknownFieldError names the key DisallowUnknownFields refused by its
// path ("error.mesage"); encoding/json gives only its name.
func unknownFieldError(b []byte, prefix string, v any, quoted string) error {
	path, known := unknownField(b, reflect.TypeOf(v), "")
	if path == "" {
		path, _ = strconv.Unquote(quoted)
	}
	msg := "is not a field of this request"
	if len(known) > 0 {
		msg += " (fields here: " + strings.Join(known, ", ") + ")"
	}
	return invalid(JoinField(prefix, path), "%s", msg)
}

func jsonError(prefix string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := JoinField(prefix, te.Field)
		return invalid(field, "must be %s, got JSON %s", jsonTypeName(te.Type), te.Value)
	case errors.As(err, &se):
		return invalid(prefix, "malformed JSON at offset %d: %v", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return invalid(prefix, "malformed JSON: unexpected end of input")
	}
	return invalid(prefix, "malformed JSON: %v", err)
}

func JoinField(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	}
	return prefix + "." + field
}

// jsonTypeName names, in JSON's words, what a Go type decodes from.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		if jsonTypeName(t.Elem()) == "a string" {
			return "an array of strings"
		}
		return "an array"
	}
	return "an object"
}

// CleanJSON checks raw JSON that will be stored and answers it re-encoded:
// valid UTF-8, no NUL characters, finite numbers, bounded depth. Absent or
// null answers nil.
func CleanJSON(field string, raw json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, invalid(field, "must be valid JSON: %v", err)
	}
	if err := checkValue(field, v, 0); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, invalid(field, "must be valid JSON: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// CleanObject checks raw JSON that must be one object, as CleanJSON does,
// and refuses as well what decoding would silently change (invalid UTF-8,
// half a surrogate pair). It answers the object re-encoded.
func CleanObject(field string, raw json.RawMessage) (json.RawMessage, error) {
	if err := checkEncoding(raw, field); err != nil {
		return nil, err
	}
	out, err := CleanJSON(field, raw)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 || out[0] != '{' {
		return nil, invalid(field, "must be a JSON object")
	}
	return out, nil
}

func checkValue(field string, v any, depth int) error {
	if depth > MaxJSONDepth {
		return invalid(field, "is nested deeper than %d levels", MaxJSONDepth)
	}
	switch x := v.(type) {
	case string:
		return checkJSONString(field, x)
	case json.Number:
		if !numberInRange(string(x)) {
			return invalid(field, "Number %.40s is out of range", string(x))
		}
	case []any:
		for _, e := range x {
			if err := checkValue(field, e, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if err := checkJSONString(field, k); err != nil {
				return err
			}
			if err := checkValue(field, e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// numberInRange keeps numbers that every database stores: at most 100
// characters, exponent within ±300.
func numberInRange(n string) bool {
	if len(n) > 100 {
		return false
	}
	if i := strings.IndexAny(n, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(n[i+1:], "+"))
		if err != nil || exp > 300 || exp < -300 {
			return false
		}
	}
	f, err := strconv.ParseFloat(n, 64)
	return err == nil && !math.IsInf(f, 0)
}

func checkJSONString(field, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return invalid(field, `must not contain the NUL character (\u0000)`)
	}
	return nil
}

// CheckText checks a text input that will be stored or searched: valid
// UTF-8, no NUL, at most max bytes.
func CheckText(field, s string, max int) error {
	switch {
	case !utf8.ValidString(s):
		return invalid(field, "must be valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return invalid(field, "must not contain the NUL character")
	case len(s) > max:
		return invalid(field, "must be at most %d bytes, got %d", max, len(s))
	}
	return nil
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Seconds converts a count of seconds within [0, limit] to a duration.
func Seconds(field string, v *float64, limit float64) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	if math.IsNaN(*v) || *v < 0 || *v > limit {
		return 0, invalid(field, "must be between 0 and %s, got %s", secondsLimit(limit), Number(*v))
	}
	return time.Duration(*v * float64(time.Second)), nil
}

// secondsLimit renders a limit of whole seconds as "604800 seconds (7
// days)": exact for a client, and a size a person can take in.
func secondsLimit(limit float64) string {
	n := int64(limit)
	switch {
	case n >= 86400 && n%86400 == 0:
		return fmt.Sprintf("%d seconds (%d days)", n, n/86400)
	case n >= 3600 && n%3600 == 0:
		return fmt.Sprintf("%d seconds (%d hours)", n, n/3600)
	}
	return fmt.Sprintf("%d seconds", n)
}

// Number renders a client's number as written, without float notation
// unless it is too long to read (1e300).
func Number(v float64) string {
	if math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
