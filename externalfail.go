package skiplock

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/input"
)

// FailParams is an external worker's report of a failed attempt.
type FailParams struct {
	WorkerID string
	// Attempt is the claimed job's attempt; when set (> 0), a report for
	// any other attempt is refused (ErrLeaseLost), even from WorkerID.
	Attempt int
	// Queue is the job's queue, as HeartbeatParams.Queue.
	Queue     string
	ErrorType string
	Message   string
	// Retryable false fails the job for good.
	Retryable bool
	// RetryIn overrides the backoff when set.
	RetryIn *time.Duration
}

// Fail records a failed attempt as outcome.Decide says, as for a worker in
// this process: the job is retried after its backoff (or RetryIn) while
// retries are left, otherwise it fails; a job asked to cancel ends
// cancelled, one asked to pause goes to paused, its attempt unspent. A
// report that names its attempt is stored without a read before it (one
// statement on a driver with driver.FailStore).
func (c *Client) Fail(ctx context.Context, id int64, p FailParams) (*JobRow, error) {
	if p.RetryIn != nil && *p.RetryIn < 0 {
		return nil, invalid("retry_in_seconds", "must not be negative")
	}
	if p.RetryIn != nil && p.Retryable {
		if err := checkTime("retry_in_seconds", time.Now().Add(*p.RetryIn)); err != nil {
			return nil, err
		}
	}
	if err := input.CheckText("error.type", p.ErrorType, input.MaxNameBytes); err != nil {
		return nil, inputError(err)
	}
	if err := input.CheckText("error.message", p.Message, input.MaxMessageBytes); err != nil {
		return nil, inputError(err)
	}
	if p.ErrorType == "" {
		p.ErrorType = "error"
	}
	h, err := c.held(ctx, id, p.WorkerID, p.Attempt, p.Queue)
	if err != nil {
		return nil, err
	}
	fp := driver.FailParams{HeldJob: h, Error: driver.AttemptError{Attempt: h.Attempt, Type: p.ErrorType,
		Message: p.Message, At: time.Now().UTC(), Retryable: p.Retryable}}
	if p.RetryIn != nil {
		fp.Wait = *p.RetryIn
	} else {
		// Each kind's backoff, so that nothing reads the job for its kind.
		fp.Wait, fp.WaitKinds, fp.Waits = c.backoffsOfKinds(h.Attempt - 1)
	}
	j, err := c.failHeld(ctx, fp)
	if err != nil {
		return nil, c.refused(ctx, id, err)
	}
	c.history.recordReported(j)
	if j.State == StatePending {
		c.wake.insertDone(c.driver, []string{j.Queue}, true)
	}
	return j, nil
}
