// Package input is the one step every input to Skiplock passes before it
// is stored, whoever sends it (the HTTP server, the command line, a Go
// caller): strict JSON decoding (unknown fields, invalid UTF-8 and lone
// surrogates refused), bounded text, stored JSON re-encoded within a depth
// and number range, and the bounds of a job's fields. Errors name the
// field at fault.
package input

import (
	"fmt"
	"math"
	"strings"
)

// Bounds of a job's fields, so that no input reaches the database's own
// limits (index row size, integer range) and fails there.
const (
	MaxNameBytes    = 200
	MaxKeyBytes     = 500
	MaxTags         = 100
	MaxDependsOn    = 1000
	MaxMaxRetries   = 1_000_000
	MaxDelaySeconds = 10 * 366 * 24 * 3600
	// MaxLeaseSeconds bounds a lease a worker asks for: a week.
	MaxLeaseSeconds  = 7 * 24 * 3600
	MaxMessageBytes  = 64 << 10
	MaxProgressBytes = 4 << 10
	// MaxAttempt is the largest attempt a job holds: PostgreSQL stores it
	// in an integer column (int4).
	MaxAttempt = math.MaxInt32
)

// Attempt checks the attempt a worker's report names: the claimed job's,
// counted from 1, within the column that stores it.
func Attempt(field string, attempt int) error {
	if attempt < 1 || attempt > MaxAttempt {
		return invalid(field, "must be between 1 and %d (the claimed job's attempt), got %d", MaxAttempt, attempt)
	}
	return nil
}

// Error is bad input: Field names it ("payload.a", "jobs[3].priority"),
// TooLarge tells an input over its size limit.
type Error struct {
	Field    string
	Message  string
	TooLarge bool
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...)}
}

// TooLargeError is an input over its size limit.
func TooLargeError(field, format string, args ...any) *Error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...), TooLarge: true}
}

// Storable answers text that Skiplock records of its own accord (a
// worker's error message, a panic's stack), which no caller can be asked
// to mend, with each NUL replaced by U+FFFD: PostgreSQL stores no NUL in
// text or JSON.
func Storable(s string) string {
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
