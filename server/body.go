package server

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/skiplock/skiplock/internal/input"
)

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
	return input.Decode(b, "", v)
}

// parseID reads a positive job id from the path.
func parseID(r *http.Request) (int64, error) {
	s := r.PathValue("id")
	id, ok := parsePositive(s)
	if !ok {
		return 0, badRequest("id", "must be a positive integer in plain decimal (no sign, no leading zero), got %q", input.Truncate(s, 40))
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
