package driver

import "context"

// CompleteClaimStore finishes a worker's held jobs and claims its next ones
// in one transaction: an external worker's claim that carries the report
// of its last jobs costs one commit, not two. Without it the library runs
// JobCompleteMany and JobClaim in a transaction it begins.
type CompleteClaimStore interface {
	// JobCompleteClaim runs JobCompleteMany(done) and then JobClaim(p) in
	// one transaction, and answers what each answers. done may be empty.
	// An error of either rolls both back.
	JobCompleteClaim(ctx context.Context, done []CompleteParams, p ClaimParams) ([]int64, []*Job, error)
}
