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
// {}. A payload piped in without "-" is refused rather than dropped.
func readPayload(args []string, stdin io.Reader) (json.RawMessage, error) {
	if len(args) == 0 {
		if stdinHasInput(stdin) {
			return nil, usagef("stdin holds data but no payload source was given: pass - to read the payload from stdin, or </dev/null to enqueue {}")
		}
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
		return nil, usagef("%v", err)
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
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if err != nil {
			return ": " + err.Error()
		}
		return ""
	}
	line, col := 1, 1
	for _, c := range b[:min(int(se.Offset), len(b))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf(" at line %d, column %d: %v", line, col, se)
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

// stdinHasInput tells whether stdin is a pipe or a non-empty file: input
// someone meant to send. A terminal or /dev/null is not.
func stdinHasInput(stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular() && fi.Size() > 0
}

// unwrapPath drops the *PathError's repetition of the file name.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
