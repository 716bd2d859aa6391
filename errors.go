package skiplock

import (
	"errors"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/driver"
)

// Errors the client answers; they work with errors.Is.
var (
	ErrNotFound          = driver.ErrNotFound
	ErrLeaseLost         = driver.ErrLeaseLost
	ErrWrongState        = driver.ErrWrongState
	ErrMissingDependency = driver.ErrMissingDependency
	// ErrUnsupported: the driver lacks the optional store the call needs
	// (see driver.As).
	ErrUnsupported = driver.ErrUnsupported
	// ErrCancelled is the cause of a job context cancelled by request.
	ErrCancelled = errors.New("job cancelled by request")
	// ErrPaused is the cause of a job context ended by a pause request: the
	// job goes to paused (its attempt unspent, its checkpoint kept) when
	// its worker returns, unless the worker completed it.
	ErrPaused = errors.New("job paused by request")
	// ErrStopping is the cause of a job context cancelled by StopAndCancel.
	ErrStopping = errors.New("client is stopping")
)

// MissingDependencyError is ErrMissingDependency naming the parent (ID)
// that does not exist.
type MissingDependencyError = driver.MissingDependencyError

// ValidationError is a rejected input: Field names it ("priority",
// "payload.file_path"), Message the rule. Nothing was stored.
type ValidationError = contract.ValidationError

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent wraps err so that the job fails at once, without retries.
func Permanent(err error) error {
	if err == nil {
		err = errors.New("permanent failure")
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// SnoozeError reschedules a job after Delay without spending a retry.
type SnoozeError struct{ Delay time.Duration }

func (e *SnoozeError) Error() string { return fmt.Sprintf("snoozed for %s", e.Delay) }

// Snooze returns an error that reschedules the job after d without spending
// a retry.
func Snooze(d time.Duration) error {
	if d < 0 {
		d = 0
	}
	return &SnoozeError{Delay: d}
}
