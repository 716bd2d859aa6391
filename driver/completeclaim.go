package driver

import "context"

// CompleteClaimStore finishes a worker's held jobs and claims its next ones
// in one transaction: an external worker's claim that carries the report
// of its last jobs costs one commit, not two. Without it the library runs
// CompleteThenClaim in a transaction it begins.
type CompleteClaimStore interface {
	// JobCompleteClaim runs JobCompleteMany(done) and then JobClaim(p) in
	// one transaction, and answers what each answers. done may be empty.
	// An error of either rolls both back.
	JobCompleteClaim(ctx context.Context, done []CompleteParams, p ClaimParams) ([]CompletedJob, []*Job, error)
}

// CompleteThenClaim runs JobCompleteMany(done) and then JobClaim(p) in the
// transaction inTx runs them in (a driver's own, or the caller's):
// JobCompleteClaim for a driver without a statement of its own for it.
func CompleteThenClaim[E Executor](ctx context.Context, inTx func(context.Context, func(E) error) error,
	done []CompleteParams, p ClaimParams) ([]CompletedJob, []*Job, error) {
	var finished []CompletedJob
	var jobs []*Job
	err := inTx(ctx, func(tx E) (err error) {
		if finished, err = tx.JobCompleteMany(ctx, done); err != nil {
			return err
		}
		jobs, err = tx.JobClaim(ctx, p)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return finished, jobs, nil
}
