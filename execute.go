package skiplock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
	"github.com/skiplock/skiplock/internal/input"
)

// execute works one claimed job and records its outcome.
func (c *Client) execute(row *JobRow) {
	w := c.config.Workers.byKind[row.Kind]
	if w == nil {
		// Claims name our kinds, so this is a job whose kind was removed.
		c.recordFailure(&runningJob{client: c, row: row}, Permanent(fmt.Errorf("no worker for kind %q", row.Kind)))
		return
	}
	run, err := c.attempt(row, w, c.policies[row.Kind])
	c.finish(run, err, false)
}

// attempt runs w on row, a job this client holds, and answers its error.
func (c *Client) attempt(row *JobRow, w *registeredWorker, pol kindPolicy) (*runningJob, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	run := &runningJob{client: c, row: row, ctx: ctx, lease: pol.lease, cancel: cancel, timeout: pol.timeout,
		backoff: pol.backoff}
	c.running.add(run)
	workCtx := ctx
	if run.timeout > 0 {
		var stop context.CancelFunc
		workCtx, stop = context.WithTimeoutCause(ctx, run.timeout, fmt.Errorf("job timed out after %s", run.timeout))
		defer stop()
	}
	err := c.callWorker(workCtx, w, row, run)
	if cause := context.Cause(ctx); cause != nil && err != nil {
		err = fmt.Errorf("%w (%w)", err, cause)
	}
	return run, err
}

// finish records an attempt's outcome: through the completer, or at once
// when now (a job worked on the caller's goroutine, Drain and WorkJob).
func (c *Client) finish(run *runningJob, err error, now bool) {
	row := run.row
	switch {
	case err == nil && len(run.next) > 0:
		c.completeWithNext(run)
	case err == nil && now:
		c.completeNow(run)
	case err == nil:
		if !c.completer.Add(driver.CompleteParams{HeldJob: run.held(), Result: run.result}) {
			c.running.remove(row.ID, row.Attempt) // stopped: the job runs again after its lease
		}
	case errors.Is(err, ErrLeaseLost):
		c.running.remove(row.ID, row.Attempt) // another worker has it now
	case errors.Is(err, ErrStopping):
		c.handBack(run)
	default: // a job asked to pause is paused (outcome.Decide)
		c.recordFailure(run, err)
	}
}

// completeNow completes one job in its own statement, as a flush of one.
func (c *Client) completeNow(run *runningJob) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	batch := []driver.CompleteParams{{HeldJob: run.held(), Result: run.result}}
	done, err := c.driver.JobCompleteMany(ctx, batch)
	if err != nil {
		c.logOutcome(run, "completed", err)
		c.running.remove(run.row.ID, run.row.Attempt)
		return
	}
	c.flushed(batch, done)
}

// callWorker runs the worker inside the work middleware, turning a panic
// into a *PanicError: the worker's inside the middleware, so that they see
// it as an error; the middleware's own outside.
func (c *Client) callWorker(ctx context.Context, w *registeredWorker, row *JobRow, run *runningJob) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	if c.workMW == nil {
		return w.work(ctx, row, run)
	}
	return c.workMW(ctx, row, func(ctx context.Context) (err error) {
		run.workCtx = ctx
		defer func() {
			if r := recover(); r != nil {
				err = &PanicError{Value: r, Stack: string(debug.Stack())}
			}
		}()
		return w.work(ctx, row, run)
	})
}

// PanicError is the error of an attempt whose worker panicked: the value
// it panicked with and the goroutine's stack.
type PanicError struct {
	Value any
	Stack string
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// recordFailure stores a failed or snoozed attempt as outcome.Decide says:
// retried after its backoff, snoozed, failed for good when permanent or out
// of retries, paused or cancelled when the job was asked to.
func (c *Client) recordFailure(run *runningJob, err error) {
	defer c.running.remove(run.row.ID, run.row.Attempt)
	var snooze *SnoozeError
	if errors.As(err, &snooze) {
		var j *JobRow
		serr := c.writeOutcome(run, "snoozed", func(ctx context.Context) (err error) {
			j, err = outcome.SnoozeJob(ctx, c.driver, driver.SnoozeParams{HeldJob: run.held(), RunAt: time.Now().Add(snooze.Delay)})
			return err
		})
		c.recorded(run, j, serr, nil)
		return
	}
	entry := driver.AttemptError{Attempt: run.row.Attempt, Type: errorType(err), Message: input.Storable(err.Error()),
		At: time.Now().UTC(), Retryable: !IsPermanent(err) && !errors.Is(err, ErrCancelled)}
	var pe *PanicError
	if errors.As(err, &pe) {
		entry.Stack = input.Storable(pe.Stack)
	}
	backoff := run.backoff
	if backoff == nil { // a job with no worker
		backoff = c.policyOf(run.row.Kind, WorkerOpts{}).backoff
	}
	p := driver.FailParams{HeldJob: run.held(), Error: entry, Wait: backoff(run.row.Attempt - 1)}
	var j *JobRow
	ferr := c.writeOutcome(run, "failed", func(ctx context.Context) (err error) {
		j, err = c.failHeld(ctx, p)
		return err
	})
	c.recorded(run, j, ferr, err)
}

// recorded logs and announces the end of a failed (err) or snoozed (nil)
// attempt, j as stored (nil when storing failed: rerr), and gives a failure
// to the error handler. A paused job's worker stopped as it was asked to.
func (c *Client) recorded(run *runningJob, j *JobRow, rerr, err error) {
	switch {
	case j != nil && j.State == StatePaused:
		c.logOutcome(run, "paused", rerr)
		return
	case err == nil:
		c.logOutcome(run, "snoozed", rerr)
		if rerr == nil {
			c.events.emitJob(EventJobSnoozed, j, "", nil)
		}
	default:
		c.logOutcome(run, "failed", rerr, "error", err.Error())
		if rerr == nil {
			c.events.emitJob(outcomeEvent(j), j, "", err)
		}
		if !errors.Is(err, ErrCancelled) {
			c.handleError(j, run.row, err)
		}
	}
	c.wakeIfPending(j)
}

// failHeld stores a failed attempt as outcome.Decide says: in the driver's
// one statement when it has one (driver.FailStore), else outcome's
// statements in a transaction.
func (c *Client) failHeld(ctx context.Context, p driver.FailParams) (*JobRow, error) {
	if fs, err := driver.As[driver.FailStore](c.driver); err == nil {
		return fs.JobFail(ctx, p)
	}
	return outcome.FailJob(ctx, c.driver, p)
}

// writeOutcome writes an attempt's outcome with the retries of the
// completions (completer.Retry): a database down for a while does not
// leave a job running until its lease ends while its worker is alive.
// Stop bounds the retries. A client never started (Drain, WorkJob) tries
// once, as it completes.
func (c *Client) writeOutcome(run *runningJob, what string, write func(context.Context) error) error {
	return c.completer.Retry(write, func(try int, err error) {
		c.log.Warn("job "+what+": not recorded yet, trying again", jobAttr(run.row), "try", try, "record_error", err)
	})
}

// handleError gives a failed attempt to Config.ErrorHandler, with the job
// as recorded (or as claimed, when recording failed).
func (c *Client) handleError(recorded, claimed *JobRow, err error) {
	h := c.config.ErrorHandler
	if h == nil {
		return
	}
	job := recorded
	if job == nil {
		job = claimed
	}
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("error handler panicked", jobAttr(job), "panic", r)
		}
	}()
	h(context.Background(), job, err)
}

// wakeIfPending wakes the producer of a job that went back to pending at
// once (a snooze or a backoff of zero): an idle queue does not claim after
// each finished job on its own.
func (c *Client) wakeIfPending(j *JobRow) {
	if j != nil && j.State == StatePending {
		c.wakeLocal(j.Queue)
	}
}

// handBack returns a job cancelled by shutdown to pending, attempt unspent
// (or as outcome.Decide says: cancelled, paused, when it was asked to), and
// answers it as it is now (nil if that failed: its lease runs out).
func (c *Client) handBack(run *runningJob) *JobRow {
	defer c.running.remove(run.row.ID, run.row.Attempt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	j, err := outcome.SnoozeJob(ctx, c.driver, driver.SnoozeParams{HeldJob: run.held(), RunAt: time.Now()})
	c.logOutcome(run, "handed back", err)
	return j
}

// completeWithNext completes the job and inserts its next stages in one
// transaction: both happen or neither.
func (c *Client) completeWithNext(run *runningJob) {
	defer c.running.remove(run.row.ID, run.row.Attempt)
	ended := StateCompleted
	err := c.inTx(context.Background(), func(tx driver.Executor) error {
		done, err := tx.JobCompleteMany(context.Background(), []driver.CompleteParams{{HeldJob: run.held(), Result: run.result}})
		if err != nil {
			return err
		}
		if len(done) == 0 {
			return ErrLeaseLost
		}
		if cancelled, err := endedCancelled(context.Background(), tx, run.row.ID); err != nil || cancelled {
			if cancelled {
				ended = StateCancelled
			}
			return err // a job asked to cancel ends cancelled and starts no next stage
		}
		// The worker's context (without its cancel), so that insert
		// middleware sees what work middleware put there, a trace.
		nextCtx := context.Background()
		if run.workCtx != nil {
			nextCtx = context.WithoutCancel(run.workCtx)
		}
		_, err = c.insertNext(nextCtx, tx, run.row, run.next)
		return err
	})
	if err == nil {
		c.emitCompleted(run, ended)
	}
	c.afterCompleteWithNext(run, err)
}

// endedCancelled reports whether a job just finished in tx ended cancelled.
func endedCancelled(ctx context.Context, tx driver.Executor, id int64) (bool, error) {
	j, err := tx.JobGet(ctx, id)
	if err != nil {
		return false, err
	}
	return j.State == StateCancelled, nil
}

func (c *Client) logOutcome(run *runningJob, what string, err error, attrs ...any) {
	attrs = append(attrs, jobAttr(run.row))
	if err != nil {
		c.log.Warn("job "+what+": not recorded", append(attrs, "record_error", err)...)
		return
	}
	c.log.Debug("job "+what, attrs...)
}

func errorType(err error) string {
	var pe *PanicError
	switch {
	case errors.As(err, &pe):
		return "panic"
	case errors.Is(err, ErrCancelled): // its own, not the worker's wrapping of it
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	return reflect.TypeOf(err).String()
}
