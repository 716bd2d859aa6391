package skiplock

import (
	"context"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/gather"
)

// External workers' claims and batch reports that arrive while another of
// the same worker's runs are gathered into the next statement: a worker
// with four claims in flight of 100 jobs each then claims up to 400 jobs a
// statement and reports them in one, one commit instead of four. A worker
// that is alone on an idle server runs each call at once, as before.

// externalGather holds the claims and reports waiting for a statement.
type externalGather struct {
	claims  gather.Gather[claimKey, *claimCall]
	reports gather.Gather[string, *reportCall]
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
	done    []int64
	err     error
}

// maxGatheredClaim is the most jobs a gathered claim takes: the most one
// claim may ask for.
const maxGatheredClaim = 1000

// claimGathered reports reports (none: a plain claim) and claims p.Max
// jobs at place, in one transaction with the same worker's claims that
// wait for it. It answers the jobs, and the ids of the reported jobs the
// transaction finished, sorted: the gathered calls share them, and no two
// name one job.
func (c *Client) claimGathered(ctx context.Context, place *claimPlace, p driver.ClaimParams, reports []driver.CompleteParams) ([]int64, []*JobRow, error) {
	call := &claimCall{params: p, reports: reports}
	key := claimKeyOf(place, p)
	var named reportNames
	fits := func(batch []*claimCall, w *claimCall) bool {
		n := w.params.Max
		for _, b := range batch {
			n += b.params.Max
		}
		return n <= maxGatheredClaim && named.fit(batch[0].reports, w.reports)
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
		var done []int64
		claim := c.driver.JobClaim
		if len(reports) > 0 {
			cc := c.completeClaimStore()
			claim = func(ctx context.Context, p driver.ClaimParams) (jobs []*driver.Job, err error) {
				done, jobs, err = cc.JobCompleteClaim(ctx, reports, p)
				return jobs, err
			}
		}
		jobs, err := place.claim(ctx, claim, cp)
		slices.Sort(done)
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

func (c completeClaimInTx) JobCompleteClaim(ctx context.Context, done []driver.CompleteParams, p driver.ClaimParams) ([]int64, []*driver.Job, error) {
	inTx := func(ctx context.Context, fn func(driver.ExecutorTx) error) error { return driver.InTx(ctx, c.d, fn) }
	return driver.CompleteThenClaim(ctx, inTx, done, p)
}

// reportCall is one CompleteMany's share of a gathered report.
type reportCall struct {
	ctx    context.Context
	params []driver.CompleteParams
	done   []int64
	err    error
}

// gatheredReportTimeout bounds a report that carries other calls' jobs,
// since no one caller's context may cut it short.
const gatheredReportTimeout = 30 * time.Second

// completeGathered finishes params (one worker's held jobs) in one
// statement with the same worker's reports that wait for it, and answers
// the ids that statement finished, sorted. A report that names a job the gathered ones name
// waits for the next statement: of two reports of one job, one finishes it
// and the other is refused, as when they run apart.
func (c *Client) completeGathered(ctx context.Context, workerID string, params []driver.CompleteParams) ([]int64, error) {
	call := &reportCall{ctx: ctx, params: params}
	var named reportNames
	fits := func(batch []*reportCall, w *reportCall) bool {
		return named.fit(batch[0].params, w.params)
	}
	c.gathered.reports.Do(workerID, call, fits, c.runReports)
	return call.done, call.err
}

// reportNames are the jobs the reports of one gathered statement name.
type reportNames struct {
	ids map[int64]bool
	n   int
}

// fit answers whether reports w can join a statement whose first call
// reports first (the batch's calls are offered in turn, each once), and
// takes their names if so: at most MaxCompleteMany jobs, none named twice.
// A report that names a job again waits for a statement of its own.
func (r *reportNames) fit(first, w []driver.CompleteParams) bool {
	if len(w) == 0 {
		return true // a plain claim, or no report: nothing to name
	}
	if r.ids == nil {
		r.ids = make(map[int64]bool, len(first)+len(w))
		for _, p := range first {
			r.ids[p.ID] = true
		}
		r.n = len(first)
	}
	if r.n+len(w) > MaxCompleteMany {
		return false
	}
	for _, p := range w {
		if r.ids[p.ID] {
			return false
		}
	}
	for _, p := range w {
		r.ids[p.ID] = true
	}
	r.n += len(w)
	return true
}

// runReports finishes a batch of reports in one statement and gives each
// the ids it finished, sorted: the calls share them, and no two name one
// job.
func (c *Client) runReports(batch []*reportCall) {
	if len(batch) == 1 {
		b := batch[0]
		b.done, b.err = c.driver.JobCompleteMany(b.ctx, b.params)
		slices.Sort(b.done)
		return
	}
	var params []driver.CompleteParams
	for _, b := range batch {
		params = append(params, b.params...)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), gatheredReportTimeout)
	defer cancel()
	done, err := c.driver.JobCompleteMany(ctx, params)
	slices.Sort(done)
	for _, b := range batch {
		b.done, b.err = done, err
	}
}
