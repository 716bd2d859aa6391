package driver

import (
	"context"
	"time"
)

// FailStore fails a held job in one statement, for a report that names its
// attempt: the library need not read the job first (its kind, retries and
// requests decide the outcome). Without it the library reads the job and
// runs driver/outcome.
type FailStore interface {
	// JobFail records a failed attempt of a held job and answers the job as
	// it ends: paused, its attempt unspent, when it was asked to pause (and
	// not to cancel); cancelled when asked to cancel; retried after its
	// kind's wait when p.Error.Retryable and attempt <= max_retries; else
	// failed. The error entry is recorded with Retryable as it was decided
	// (asked and retries left). A job it finishes settles its dependents.
	// ErrLeaseLost when the job is not held so.
	JobFail(ctx context.Context, p FailHeldParams) (*Job, error)
}

// FailHeldParams is a failed attempt reported without reading the job: the
// wait before a retry is given for each kind whose wait is not Wait, as
// the leases of ClaimParams are.
type FailHeldParams struct {
	HeldJob
	Error AttemptError
	// Wait is the wait before a retry of a kind not in WaitKinds; Waits[i]
	// is the wait of WaitKinds[i].
	Wait      time.Duration
	WaitKinds []string
	Waits     []time.Duration
}
