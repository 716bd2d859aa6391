package skiplock

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/completer"
)

// External workers' claims that arrive while another of the same worker's
// runs are gathered into the next statement (completer.Gather, as its
// completions are): a worker with four claims in flight of 100 jobs each
// then claims up to 400 jobs a statement, and the reports they carry are
// stored in the same commit. A worker alone on an idle server runs each
// call at once.

// externalGather holds the claims waiting for a statement.
type externalGather struct {
	claims completer.Gather[claimKey, *claimCall]
}

// claimKey names claims that one statement can make: one place (queue,
// tenant, kinds), one worker, one lease: each job its kind's (byKind), or
// lease for every job.
type claimKey struct {
	place  *claimPlace
	worker string
	lease  time.Duration
	byKind bool
}

func claimKeyOf(place *claimPlace, p driver.ClaimParams) claimKey {
	return claimKey{place: place, worker: p.WorkerID, lease: p.DefaultLease, byKind: p.LeaseKinds != nil}
}

// claimCall is one Claim's share of a gathered claim, and the reports
// that go before it (CompleteAndClaim).
type claimCall struct {
	params  driver.ClaimParams
	reports []driver.CompleteParams
	jobs    []*JobRow
	done    []driver.CompletedJob
	err     error
}

// maxGatheredClaim is the most jobs a gathered claim takes: the most one
// claim may ask for.
const maxGatheredClaim = 1000

// claimGathered reports reports (none: a plain claim) and claims p.Max
// jobs at place, in one transaction with the same worker's claims that
// wait for it. It answers the jobs, and the reported jobs the transaction
// finished, sorted by id: the gathered calls share them, and no two name
// one job.
func (c *Client) claimGathered(ctx context.Context, place *claimPlace, p driver.ClaimParams, reports []driver.CompleteParams) ([]driver.CompletedJob, []*JobRow, error) {
	call := &claimCall{params: p, reports: reports}
	key := claimKeyOf(place, p)
	var named completer.Names
	fits := func(batch []*claimCall, w *claimCall) bool {
		n := w.params.Max
		for _, b := range batch {
			n += b.params.Max
		}
		return n <= maxGatheredClaim && named.Fit(batch[0].reports, w.reports, MaxCompleteMany)
	}
	c.gathered.claims.Do(key, call, fits, func(batch []*claimCall) {
		cp := batch[0].params
		var reports []driver.CompleteParams
		for i, b := range batch {
			if i > 0 {
				cp.Max += b.params.Max
			}
			reports = append(reports, b.reports...)
		}
		var done []driver.CompletedJob
		claim := c.driver.JobClaim
		if len(reports) > 0 {
			cc := c.completeClaimStore()
			claim = func(ctx context.Context, p driver.ClaimParams) (jobs []*driver.Job, err error) {
				done, jobs, err = cc.JobCompleteClaim(ctx, reports, p)
				return jobs, err
			}
		}
		jobs, err := place.claim(ctx, claim, cp)
		sortCompleted(done)
		// The jobs come in claim order: each call takes its share in turn.
		for _, b := range batch {
			n := min(b.params.Max, len(jobs))
			b.jobs, b.err, b.done, jobs = jobs[:n:n], err, done, jobs[n:]
		}
	})
	return call.done, call.jobs, call.err
}

// completeClaimStore answers the driver's statement that reports and
// claims in one transaction, or, when it has none, the two statements in a
// transaction of the driver's.
func (c *Client) completeClaimStore() driver.CompleteClaimStore {
	if cc, err := driver.As[driver.CompleteClaimStore](c.driver); err == nil {
		return cc
	}
	return completeClaimInTx{c.driver}
}

// completeClaimInTx is JobCompleteClaim for a driver without it: the
// report and the claim in a transaction of the driver's.
type completeClaimInTx struct{ d driver.Driver }

func (c completeClaimInTx) JobCompleteClaim(ctx context.Context, done []driver.CompleteParams, p driver.ClaimParams) ([]driver.CompletedJob, []*driver.Job, error) {
	inTx := func(ctx context.Context, fn func(driver.ExecutorTx) error) error { return driver.InTx(ctx, c.d, fn) }
	return driver.CompleteThenClaim(ctx, inTx, done, p)
}
