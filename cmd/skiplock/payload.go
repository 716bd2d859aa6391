package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/skiplock/skiplock/internal/input"
)

// maxPayloadInput bounds what enqueue reads from stdin or a file: the
// largest payload a server accepts (--max-payload-bytes at most 1 GiB).
const maxPayloadInput = 1 << 30

// readPayload answers the payload of `enqueue KIND [SOURCE]`: "-" reads
// stdin, "@FILE" reads FILE, anything else is the JSON itself; no source is
// {}. Stdin is read only when "-" asks for it, so that enqueue behaves the
// same in a terminal, a pipe and a `while read` loop (whose input it must
// not swallow).
func readPayload(args []string, stdin io.Reader) (json.RawMessage, error) {
	if len(args) == 0 {
		return json.RawMessage("{}"), nil
	}
	src := args[0]
	switch {
	case src == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, maxPayloadInput+1))
		if err != nil {
			return nil, fmt.Errorf("payload from stdin: %w", err)
		}
		return checkPayload("payload from stdin", b)
	case strings.HasPrefix(src, "@"):
		name := src[1:]
		b, err := readPayloadFile(name)
		if err != nil {
			return nil, err
		}
		return checkPayload("payload from "+name, b)
	}
	b := []byte(src)
	if !json.Valid(b) {
		return nil, usagef("PAYLOAD_JSON: not valid JSON%s (or pass - to read stdin, @FILE to read a file)", jsonErrorPlace(b))
	}
	return cleanPayload("", b)
}

// cleanPayload refuses what the server refuses in a payload: anything but
// an object, invalid UTF-8, NUL, numbers out of range, deep nesting. The
// error names source, when the payload came from a file or stdin.
func cleanPayload(source string, b []byte) (json.RawMessage, error) {
	out, err := input.CleanObject("payload", b)
	switch {
	case err != nil && source != "":
		return nil, usagef("%s: %v", source, err)
	case err != nil:
		return nil, &usageError{err: err} // an *input.Error: it names the field
	}
	return out, nil
}

func readPayloadFile(name string) ([]byte, error) {
	if name == "" {
		return nil, usagef("payload: @ needs a file name, e.g. @job.json")
	}
	f, err := os.Open(name)
	if err != nil {
		// A missing or unreadable file is the caller's input: exit 2.
		return nil, usagef("payload from %s: %v", name, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, usagef("payload from %s: is a directory", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPayloadInput+1))
	if err != nil {
		return nil, fmt.Errorf("payload from %s: %w", name, err)
	}
	return b, nil
}

// checkPayload answers b if it is one JSON object; its errors name where
// the payload came from.
func checkPayload(source string, b []byte) (json.RawMessage, error) {
	if len(b) > maxPayloadInput {
		return nil, usagef("%s: larger than %d bytes", source, maxPayloadInput)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, usagef("%s: empty; want a JSON object such as {}", source)
	}
	if !json.Valid(b) {
		return nil, usagef("%s: invalid JSON%s", source, jsonErrorPlace(b))
	}
	if b[0] != '{' {
		return nil, usagef("%s: want a JSON object, got %s", source, jsonKind(b[0]))
	}
	return cleanPayload(source, b)
}

// jsonErrorPlace answers " at line N, column C: <reason>" for invalid JSON.
func jsonErrorPlace(b []byte) string {
	line, col, reason := jsonErrorAt(b)
	if line == 0 {
		return reason
	}
	return fmt.Sprintf(" at line %d, column %d: %s", line, col, reason)
}

// jsonColumn answers " at column C: <reason>" for invalid JSON on one line.
func jsonColumn(b []byte) string {
	line, col, reason := jsonErrorAt(b)
	if line == 0 {
		return reason
	}
	return fmt.Sprintf(" at column %d: %s", col, reason)
}

// jsonErrorAt answers where invalid JSON goes wrong (line and column from
// 1) and why; line 0 when the decoder gives no place, the reason then
// being ": <error>" or "".
func jsonErrorAt(b []byte) (line, col int, reason string) {
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if err != nil {
			return 0, 0, ": " + err.Error()
		}
		return 0, 0, ""
	}
	// Offset counts the bytes read, the one at fault included; at the end
	// of the input the fault is just past the last byte.
	at := len(b)
	if int(se.Offset) < len(b) {
		at = max(int(se.Offset)-1, 0)
	}
	line, col = 1, 1
	for _, c := range b[:at] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col, se.Error()
}

func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// unwrapPath drops the *PathError's repetition of the file name.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
