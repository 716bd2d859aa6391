package skiplock

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
	"github.com/skiplock/skiplock/internal/input"
)

// FailParams is an external worker's report of a failed attempt.
type FailParams struct {
	WorkerID string
	// Attempt is the claimed job's attempt; when set (> 0), a report for
	// any other attempt is refused (ErrLeaseLost), even from WorkerID.
	Attempt   int
	ErrorType string
	Message   string
	// Retryable false fails the job for good.
	Retryable bool
	// RetryIn overrides the backoff when set.
	RetryIn *time.Duration
}

// Fail records a failed attempt: the job is retried after its backoff (or
// RetryIn) while retries are left, otherwise it fails. A job asked to pause
// goes to paused instead, its attempt unspent. A report that names its
// attempt is one fenced statement on a driver with driver.FailStore; without
// the attempt (or that store) the job is read first.
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
	var j *JobRow
	var err error
	if fs, ferr := driver.As[driver.FailStore](c.driver); ferr == nil {
		j, err = c.failFenced(ctx, fs, id, p)
	} else {
		j, err = c.failRead(ctx, id, p)
	}
	if err == nil {
		c.history.recordReported(j)
	}
	if err == nil && j.State == StatePending {
		c.wake.insertDone(c.driver, []string{j.Queue}, true)
	}
	return j, err
}

// failFenced fails the job in the driver's one statement, the waits of
// every kind it knows given, so that nothing reads the job first.
func (c *Client) failFenced(ctx context.Context, fs driver.FailStore, id int64, p FailParams) (*JobRow, error) {
	h, err := c.held(ctx, id, p.WorkerID, p.Attempt)
	if err != nil {
		return nil, err
	}
	fp := driver.FailHeldParams{HeldJob: h, Error: driver.AttemptError{Attempt: h.Attempt, Type: p.ErrorType,
		Message: p.Message, At: time.Now().UTC(), Retryable: p.Retryable}}
	if p.RetryIn != nil {
		fp.Wait = *p.RetryIn
	} else {
		fp.Wait, fp.WaitKinds, fp.Waits = c.backoffsOfKinds(h.Attempt - 1)
	}
	j, err := fs.JobFail(ctx, fp)
	if err != nil {
		return nil, c.refused(ctx, id, err)
	}
	return j, nil
}

// failRead reads the job, then runs driver/outcome in a transaction.
func (c *Client) failRead(ctx context.Context, id int64, p FailParams) (*JobRow, error) {
	if err := checkAttempt("attempt", p.Attempt); err != nil {
		return nil, err
	}
	row, err := c.driver.JobGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if row.State != StateRunning || row.WorkerID != p.WorkerID || (p.Attempt > 0 && row.Attempt != p.Attempt) {
		return nil, leaseLost(row)
	}
	// A job asked to pause goes to paused whatever the worker reports as its
	// failure (it stopped because it was asked to).
	if j, err := c.driver.JobPauseHeld(ctx, driver.HeldJob{ID: id, Attempt: row.Attempt, WorkerID: p.WorkerID}); err == nil {
		return j, nil
	}
	entry := driver.AttemptError{Attempt: row.Attempt, Type: p.ErrorType, Message: p.Message, At: time.Now().UTC(),
		Retryable: p.Retryable && row.Attempt <= row.MaxRetries}
	fp := driver.FailParams{HeldJob: driver.HeldJob{ID: id, Attempt: row.Attempt, WorkerID: p.WorkerID}, Error: entry}
	if entry.Retryable {
		wait := c.policyOf(row.Kind, WorkerOpts{}).backoff(row.Attempt - 1)
		if p.RetryIn != nil {
			wait = *p.RetryIn
		}
		at := time.Now().Add(wait)
		fp.RetryAt = &at
	}
	return outcome.FailJob(ctx, c.driver, fp)
}
