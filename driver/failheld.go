package driver

import "context"

// FailStore fails a held job in one statement, with no read before it:
// the statement applies outcome.Decide to the row it locks (the
// conformance suite holds the two to one table of cases). Without it the
// library runs outcome.Fail in a transaction.
type FailStore interface {
	// JobFail records a failed attempt of a held job as outcome.Fail does
	// and answers the job as it ends. A job it finishes settles its
	// dependents. ErrLeaseLost when the job is not held so.
	JobFail(ctx context.Context, p FailParams) (*Job, error)
}
