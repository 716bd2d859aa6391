package driver

import (
	"bytes"
	"encoding/json"
)

// DecodeAttemptErrors reads a job's stored error list. Skiplock writes a
// JSON array of AttemptError, but a row written by other means may hold
// anything, and a stored job must still list: an entry that does not
// decode keeps the fields that do, and its message says it is unreadable
// and quotes it; a document that is no array is one such entry.
func DecodeAttemptErrors(doc []byte) []AttemptError {
	var out []AttemptError
	if json.Unmarshal(doc, &out) == nil {
		return out
	}
	var entries []json.RawMessage
	if json.Unmarshal(doc, &entries) != nil {
		return []AttemptError{{Message: "unreadable error list: " + string(bytes.TrimSpace(doc))}}
	}
	out = make([]AttemptError, len(entries))
	for i, raw := range entries {
		out[i] = decodeAttemptError(raw)
	}
	return out
}

// decodeAttemptError reads one entry field by field.
func decodeAttemptError(raw json.RawMessage) AttemptError {
	var e AttemptError
	if json.Unmarshal(raw, &e) == nil {
		return e
	}
	e = AttemptError{}
	var f struct {
		Attempt, Type, Message, At, Retryable, Stack json.RawMessage
	}
	if json.Unmarshal(raw, &f) == nil {
		for _, p := range []struct {
			raw json.RawMessage
			dst any
		}{{f.Attempt, &e.Attempt}, {f.Type, &e.Type}, {f.At, &e.At}, {f.Retryable, &e.Retryable}, {f.Stack, &e.Stack}} {
			if len(p.raw) > 0 {
				_ = json.Unmarshal(p.raw, p.dst) // a field that does not read stays unset
			}
		}
	}
	e.Message = "unreadable error entry: " + string(raw)
	return e
}
