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
	JobCompleteClaim(ctx context.Context, done []CompleteParams, p ClaimParams) ([]int64, []*Job, error)
}

// CompleteThenClaim runs JobCompleteMany(done) and then JobClaim(p) on e,
// which should be a transaction: JobCompleteClaim for a driver without a
// statement of its own for it.
func CompleteThenClaim(ctx context.Context, e Executor, done []CompleteParams, p ClaimParams) ([]int64, []*Job, error) {
	finished, err := e.JobCompleteMany(ctx, done)
	if err != nil {
		return nil, nil, err
	}
	jobs, err := e.JobClaim(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	return finished, jobs, nil
}
