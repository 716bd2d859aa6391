package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting of stored JSON: databases refuse (or
// overflow their stack on) very deep documents.
const maxJSONDepth = 200

// readBody reads a request body of at most limit bytes.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, badRequest("", "read request body: %v", err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge("", "request body is over the limit of %d bytes", limit)
	}
	return b, nil
}

// decodeBody reads the body as one JSON object into v. An empty body is
// an empty object.
func decodeBody(r *http.Request, limit int64, v any) error {
	b, err := readBody(r, limit)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	return decodeJSON(b, "", v)
}

// decodeJSON decodes one JSON object into v; errors name the field, under
// prefix (e.g. "jobs[3]"). It is strict: a key that v does not declare,
// invalid UTF-8 and a lone UTF-16 surrogate are refused, not dropped or
// replaced.
func decodeJSON(b []byte, prefix string, v any) error {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return badRequest(prefix, "must be a JSON object")
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
		return badRequest(prefix, "unexpected data after the JSON object")
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
	return badRequest(joinField(prefix, path), "%s", msg)
}

func jsonError(prefix string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := joinField(prefix, te.Field)
		return badRequest(field, "must be %s, got JSON %s", jsonTypeName(te.Type.String()), te.Value)
	case errors.As(err, &se):
		return badRequest(prefix, "malformed JSON at offset %d: %v", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest(prefix, "malformed JSON: unexpected end of input")
	}
	return badRequest(prefix, "malformed JSON: %v", err)
}

func joinField(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	}
	return prefix + "." + field
}

func jsonTypeName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "*int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.Contains(goType, "float"):
		return "a number"
	case strings.Contains(goType, "string"):
		if strings.HasPrefix(goType, "[]") {
			return "an array of strings"
		}
		return "a string"
	case strings.Contains(goType, "bool"):
		return "a boolean"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return "an object"
}

// cleanJSON checks raw JSON that will be stored and answers it re-encoded:
// valid UTF-8, no NUL characters, finite numbers, bounded depth. Absent or
// null answers nil.
func cleanJSON(field string, raw json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, badRequest(field, "must be valid JSON: %v", err)
	}
	if err := checkValue(field, v, 0); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, badRequest(field, "must be valid JSON: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func checkValue(field string, v any, depth int) error {
	if depth > maxJSONDepth {
		return badRequest(field, "is nested deeper than %d levels", maxJSONDepth)
	}
	switch x := v.(type) {
	case string:
		return checkJSONString(field, x)
	case json.Number:
		if !numberInRange(string(x)) {
			return badRequest(field, "number %.40s is out of range", string(x))
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
		return badRequest(field, `must not contain the NUL character (\u0000)`)
	}
	return nil
}

// checkText checks a text input that will be stored or searched: valid
// UTF-8, no NUL, at most max bytes.
func checkText(field, s string, max int) error {
	switch {
	case !utf8.ValidString(s):
		return badRequest(field, "must be valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return badRequest(field, "must not contain the NUL character")
	case len(s) > max:
		return badRequest(field, "must be at most %d bytes, got %d", max, len(s))
	}
	return nil
}

// parseID reads a positive job id from the path.
func parseID(r *http.Request) (int64, error) {
	s := r.PathValue("id")
	id, ok := parsePositive(s)
	if !ok {
		return 0, badRequest("id", "must be a positive integer in plain decimal (no sign, no leading zero), got %q", truncate(s, 40))
	}
	return id, nil
}

// parsePositive reads a positive int64 written as the API writes one: plain
// decimal digits, no sign, no leading zero. One job has one path.
func parsePositive(s string) (int64, bool) {
	if s == "" || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// secondsParam converts a count of seconds within [0, limit] to a duration.
func secondsParam(field string, v *float64, limit float64) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	if math.IsNaN(*v) || *v < 0 || *v > limit {
		return 0, badRequest(field, "must be between 0 and %s, got %s", secondsLimit(limit), number(*v))
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

// number renders a client's number as written, without float notation
// unless it is too long to read (1e300).
func number(v float64) string {
	if math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
