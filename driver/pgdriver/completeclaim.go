package pgdriver

import (
	"context"

	"github.com/skiplock/skiplock/driver"
)

// JobCompleteClaim finishes held jobs and then claims, in one transaction
// sent as one pipeline (driver.CompleteClaimStore). A fair or flow claim
// runs as JobCompleteMany and then JobClaim in a transaction (in the
// caller's, when there is one).
func (e executor) JobCompleteClaim(ctx context.Context, done []driver.CompleteParams, p driver.ClaimParams) ([]driver.CompletedJob, []*driver.Job, error) {
	if len(done) == 0 {
		jobs, err := e.JobClaim(ctx, p)
		return nil, jobs, err
	}
	if p.Fair != nil || p.Flow || e.inCallersTx() {
		if p.Flow { // before the transaction: see flowTriggersMade
			if err := e.flowTriggersMade(ctx); err != nil {
				return nil, nil, err
			}
		}
		return driver.CompleteThenClaim(ctx, e.inTx, done, p)
	}
	citus, err := e.onCitus(ctx)
	if err != nil {
		return nil, nil, err
	}
	complete, err := completeManyStmt(done, citus)
	if err != nil {
		return nil, nil, err
	}
	var jobs []*driver.Job
	// The commit waits for the WAL flush, as the completion's own does.
	err = e.inLocalTxMany(ctx, genericPlan, complete.localStmt,
		localStmt{jobClaim.SQL, jobClaim.Args(newPagedClaimArgs(p)), readClaimed(&jobs)})
	if err != nil {
		return nil, nil, err
	}
	if complete.released > 0 {
		if _, err := e.ReleaseWaiting(ctx); err != nil { // and wakes their queues
			return nil, nil, err
		}
	}
	return complete.done, jobs, nil
}

var _ driver.CompleteClaimStore = executor{}
