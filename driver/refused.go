package driver

import "errors"

// Errors a driver maps a refused write to: conditions of the database, not
// of the request, that last until an operator acts (or a standby is
// promoted). Reads still work.
var (
	// ErrReadOnly: the database accepts no writes (a hot standby, a
	// read-only default for transactions, a read-only file).
	ErrReadOnly = errors.New("database is read-only")
	// ErrDiskFull: the database has no space left to write.
	ErrDiskFull = errors.New("database disk is full")
)

// RefusedError is a write the database refused: Kind is ErrReadOnly or
// ErrDiskFull, Err the database's own error. errors.Is matches both.
type RefusedError struct {
	Kind error
	Err  error
}

func (e *RefusedError) Error() string { return e.Kind.Error() + ": " + e.Err.Error() }

func (e *RefusedError) Unwrap() []error { return []error{e.Kind, e.Err} }

// ErrorClassifier is a driver that recognises its database's refusals:
// ClassifyError answers a *RefusedError wrapping err when err is one, and
// err otherwise.
type ErrorClassifier interface {
	ClassifyError(err error) error
}
