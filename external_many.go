package skiplock

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/skiplock/skiplock/driver"
)

// MaxCompleteMany is the most jobs one CompleteMany reports.
const MaxCompleteMany = 1000

// CompleteManyItem is one finished job of an external worker's batch
// report.
type CompleteManyItem struct {
	ID int64
	// Attempt is the claimed job's attempt; when set (> 0), a report for
	// any other attempt is refused (ErrLeaseLost). Without it the job is
	// read first, as Complete does.
	Attempt int
	// Queue is the job's queue as the claim answered it, as
	// CompleteParams.Queue: a batch whose every job names it visits only
	// those queues' shards on Citus.
	Queue  string
	Result json.RawMessage
}

// CompleteManyResult answers one job of a batch report: Err is nil when
// the report finished it (completed, or cancelled when it was asked to
// cancel), else why not (ErrLeaseLost, ErrNotFound).
type CompleteManyResult struct {
	ID  int64
	Err error
}

// CompleteMany finishes jobs an external worker ran, in one statement
// (with the same worker's reports in flight: internal/completer), each
// fenced on workerID and its attempt as Complete fences one. A job
// the fence refuses does not hold the others back: each job's outcome is
// in its result, in order. The error is for the batch as a whole: bad
// input (nothing is stored) or the database.
func (c *Client) CompleteMany(ctx context.Context, workerID string, items []CompleteManyItem) ([]CompleteManyResult, error) {
	if err := checkCompleteMany("jobs", workerID, items); err != nil {
		return nil, err
	}
	out, params, err := c.heldReports(ctx, workerID, items)
	if err != nil || len(params) == 0 {
		return out, err
	}
	done, err := c.completer.Complete(ctx, workerID, params)
	if err != nil {
		return nil, err
	}
	c.settleReports(ctx, out, done)
	return out, nil
}

// heldReports answers a result per item, with the refusals known before
// any statement (a job read first that is not the worker's), and the
// held jobs to report.
func (c *Client) heldReports(ctx context.Context, workerID string, items []CompleteManyItem) ([]CompleteManyResult, []driver.CompleteParams, error) {
	out := make([]CompleteManyResult, len(items))
	params := make([]driver.CompleteParams, 0, len(items))
	for i, it := range items {
		out[i].ID = it.ID
		h, err := c.held(ctx, it.ID, workerID, it.Attempt, it.Queue)
		if err != nil {
			if !isRefusal(err) {
				return nil, nil, err
			}
			out[i].Err = err
			continue
		}
		params = append(params, driver.CompleteParams{HeldJob: h, Result: it.Result})
	}
	return out, params, nil
}

// settleReports marks the results that are not among the jobs a
// statement finished (done, sorted by id) as refused, saying why, and
// records the others in the history. done may hold other calls' jobs (a
// gathered statement): each call records its own, so each job once.
func (c *Client) settleReports(ctx context.Context, out []CompleteManyResult, done []driver.CompletedJob) {
	for i := range out {
		if out[i].Err != nil {
			continue
		}
		k, ok := slices.BinarySearchFunc(done, out[i].ID, byID)
		if !ok {
			out[i].Err = c.refused(ctx, out[i].ID, ErrLeaseLost)
			continue
		}
		c.history.recordCompleted(done[k])
	}
}

// sortCompleted sorts jobs a statement finished by id.
func sortCompleted(done []driver.CompletedJob) {
	slices.SortFunc(done, func(a, b driver.CompletedJob) int { return byID(a, b.ID) })
}

func byID(j driver.CompletedJob, id int64) int { return cmp.Compare(j.ID, id) }

// checkCompleteMany checks a batch report; field names its items in errors
// ("jobs", or CompleteAndClaim's "complete").
func checkCompleteMany(field, workerID string, items []CompleteManyItem) error {
	switch {
	case workerID == "" || len(workerID) > 200:
		return invalid("worker_id", "must be 1 to 200 characters")
	case len(items) == 0:
		return invalid(field, "must name at least one job")
	case len(items) > MaxCompleteMany:
		return invalid(field, "must name at most %d jobs, got %d", MaxCompleteMany, len(items))
	}
	seen := make(map[int64]int, len(items))
	for i, it := range items {
		if it.ID < 1 {
			return invalid(fmt.Sprintf("%s[%d].id", field, i), "must be a positive job id, got %d", it.ID)
		}
		if err := checkAttempt(fmt.Sprintf("%s[%d].attempt", field, i), it.Attempt); err != nil {
			return err
		}
		if len(it.Result) > 0 && !json.Valid(it.Result) {
			return invalid(fmt.Sprintf("%s[%d].result", field, i), "must be valid JSON")
		}
		if j, dup := seen[it.ID]; dup {
			return invalid(fmt.Sprintf("%s[%d].id", field, i), "names job %d, as %s[%d] does", it.ID, field, j)
		}
		seen[it.ID] = i
	}
	return nil
}

// isRefusal tells a report the fence refused (the job is not this
// worker's, or does not exist) from a failure of the batch.
func isRefusal(err error) bool {
	return errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrNotFound)
}
