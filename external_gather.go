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

// claimCall is one Claim's share of a gathered claim.
type claimCall struct {
	params driver.ClaimParams
	jobs   []*JobRow
	err    error
}

// maxGatheredClaim is the most jobs a gathered claim takes: the most one
// claim may ask for.
const maxGatheredClaim = 1000

// claimGathered claims p.Max jobs at place, in one statement with the
// same worker's claims that wait for it.
func (c *Client) claimGathered(ctx context.Context, place *claimPlace, p driver.ClaimParams) ([]*JobRow, error) {
	call := &claimCall{params: p}
	key := claimKeyOf(place, p)
	fits := func(batch []*claimCall, w *claimCall) bool {
		n := w.params.Max
		for _, b := range batch {
			n += b.params.Max
		}
		return n <= maxGatheredClaim
	}
	c.gathered.claims.Do(key, call, fits, func(batch []*claimCall) {
		cp := batch[0].params
		for _, b := range batch[1:] {
			cp.Max += b.params.Max
		}
		jobs, err := place.claim(ctx, c.driver, cp)
		// The jobs come in claim order: each call takes its share in turn.
		for _, b := range batch {
			n := min(b.params.Max, len(jobs))
			b.jobs, b.err, jobs = jobs[:n:n], err, jobs[n:]
		}
	})
	return call.jobs, call.err
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
// the ids it finished. A report that names a job the gathered ones name
// waits for the next statement: of two reports of one job, one finishes it
// and the other is refused, as when they run apart.
func (c *Client) completeGathered(ctx context.Context, workerID string, params []driver.CompleteParams) ([]int64, error) {
	call := &reportCall{ctx: ctx, params: params}
	var named map[int64]bool
	fits := func(batch []*reportCall, w *reportCall) bool {
		if named == nil {
			named = map[int64]bool{}
			for _, p := range batch[0].params {
				named[p.ID] = true
			}
		}
		n := len(w.params)
		for _, b := range batch {
			n += len(b.params)
		}
		if n > MaxCompleteMany {
			return false
		}
		for _, p := range w.params {
			if named[p.ID] {
				return false
			}
		}
		for _, p := range w.params {
			named[p.ID] = true
		}
		return true
	}
	c.gathered.reports.Do(workerID, call, fits, c.runReports)
	return call.done, call.err
}

// runReports finishes a batch of reports in one statement and gives each
// the ids of its own that finished.
func (c *Client) runReports(batch []*reportCall) {
	if len(batch) == 1 {
		b := batch[0]
		b.done, b.err = c.driver.JobCompleteMany(b.ctx, b.params)
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
		b.err = err
		if err != nil {
			continue
		}
		for _, p := range b.params {
			if _, ok := slices.BinarySearch(done, p.ID); ok {
				b.done = append(b.done, p.ID)
			}
		}
	}
}
