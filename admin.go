package skiplock

import (
	"context"
	"errors"
	"fmt"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/input"
)

// JobGet answers a job, live or archived.
func (c *Client) JobGet(ctx context.Context, id int64) (*JobRow, error) {
	return c.driver.JobGet(ctx, id)
}

// JobListParams filters JobList; see driver.ListParams.
type JobListParams = driver.ListParams

// MaxJobListLimit is the most jobs one JobList answers.
const MaxJobListLimit = 10000

// JobList answers jobs newest first, live and archived, that match every
// filter of p (tags, metadata, worker, error type, created and finished
// ranges among them). The last job's id is the cursor (BeforeID) of the next
// page.
func (c *Client) JobList(ctx context.Context, p JobListParams) ([]*JobRow, error) {
	for _, s := range p.States {
		if !s.Valid() {
			return nil, invalid("state", "unknown state %q", s)
		}
	}
	if p.Limit < 0 || p.Limit > MaxJobListLimit {
		return nil, invalid("limit", "must be between 1 and %d, got %d", MaxJobListLimit, p.Limit)
	}
	if err := checkListFilters(&p); err != nil {
		return nil, err
	}
	return c.driver.JobList(ctx, p)
}

// JobCancel cancels a job: at once when it is not running; a running job's
// context is cancelled and it ends cancelled when its worker returns.
func (c *Client) JobCancel(ctx context.Context, id int64) (*JobRow, error) {
	j, err := c.driver.JobCancel(ctx, id)
	if err != nil {
		return nil, err
	}
	if j.State == StateRunning {
		c.notifyStop(ctx, id, ErrCancelled)
	} else if j.State == StateCancelled {
		c.events.emitJob(EventJobCancelled, j, "", nil)
	}
	return j, nil
}

// JobRetry returns a failed or cancelled job to pending (to waiting while a
// job it depends on has not finished) with a fresh retry budget; its error
// history stays.
func (c *Client) JobRetry(ctx context.Context, id int64) (*JobRow, error) {
	j, err := c.jobRetry(ctx, id)
	if err == nil {
		c.wake.insertDone(c.driver, []string{j.Queue}, true)
	}
	return j, err
}

// JobPause holds a job until JobResume. A job not running yet is paused at
// once; a running one is asked to pause: its context ends with ErrPaused,
// and when its worker returns it goes to paused, keeping its checkpoint, its
// attempt unspent (a worker that completes it anyway completes it).
func (c *Client) JobPause(ctx context.Context, id int64) (*JobRow, error) {
	j, err := c.driver.JobPause(ctx, id)
	if !errors.Is(err, ErrWrongState) {
		return j, err
	}
	running, rerr := c.driver.JobRequestPause(ctx, id)
	if rerr != nil {
		if errors.Is(rerr, ErrNotFound) {
			return nil, err // not running (or asked to cancel): the state error says which
		}
		return nil, rerr
	}
	c.notifyStop(ctx, id, ErrPaused)
	return running, nil
}

// notifyStop tells the process running a job that it was asked to stop,
// and stops it here at once if it runs here.
func (c *Client) notifyStop(ctx context.Context, id int64, cause error) {
	if err := c.driver.Notifier().NotifyCancel(ctx, id); err != nil {
		c.log.Warn("notify the running job; its worker will see it on its next heartbeat", "job_id", id, "error", err)
	}
	c.running.cancel(id, cause)
}

// JobResume releases a paused job.
func (c *Client) JobResume(ctx context.Context, id int64) (*JobRow, error) {
	j, err := c.driver.JobResume(ctx, id)
	if err == nil {
		c.wake.insertDone(c.driver, []string{j.Queue}, true)
	}
	return j, err
}

// QueueActionOpts changes QueuePause and QueueResume.
type QueueActionOpts struct {
	// Create makes a queue that is not known yet (no settings and no jobs,
	// live or archived) instead of answering ErrNotFound: to pause a queue
	// before its first job.
	Create bool
}

// QueuePause stops claims from a queue everywhere; running jobs finish. An
// unknown queue answers ErrNotFound unless opts asks to create it, so that a
// mistyped name does not pause a queue nobody uses.
func (c *Client) QueuePause(ctx context.Context, name string, opts ...QueueActionOpts) error {
	if err := c.queueKnown(ctx, name, opts); err != nil {
		return err
	}
	return c.driver.QueuePause(ctx, name)
}

// QueueResume lets workers claim from a paused queue again. An unknown queue
// answers ErrNotFound unless opts asks to create it.
func (c *Client) QueueResume(ctx context.Context, name string, opts ...QueueActionOpts) error {
	if err := c.queueKnown(ctx, name, opts); err != nil {
		return err
	}
	if err := c.driver.QueueResume(ctx, name); err != nil {
		return err
	}
	c.wake.insertDone(c.driver, []string{name}, true)
	return nil
}

// queueKnown checks a queue's name, and that the queue exists unless the
// options create it.
func (c *Client) queueKnown(ctx context.Context, name string, opts []QueueActionOpts) error {
	if name == "" {
		return invalid("queue", "must not be empty")
	}
	if err := input.CheckText("queue", name, input.MaxNameBytes); err != nil {
		return inputError(err)
	}
	for _, o := range opts {
		if o.Create {
			return nil
		}
	}
	ok, err := c.driver.QueueExists(ctx, name)
	if err != nil {
		return fmt.Errorf("look up queue %q: %w", name, err)
	}
	if !ok {
		return fmt.Errorf("queue %q: %w (it has no settings and no jobs)", name, ErrNotFound)
	}
	return nil
}

// QueueInfo is a queue's settings and job counts.
type QueueInfo = driver.QueueInfo

// QueueList answers every known queue with its live job counts (and
// archived ones when withArchive), and the flow rules that apply to it with
// their use.
func (c *Client) QueueList(ctx context.Context, withArchive bool) ([]QueueInfo, error) {
	queues, err := c.driver.QueueList(ctx, withArchive)
	if err != nil {
		return nil, err
	}
	return c.withFlow(ctx, queues)
}

// inTx runs fn in a transaction of the driver's.
func (c *Client) inTx(ctx context.Context, fn func(driver.Executor) error) error {
	tx, err := c.driver.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// insertNext inserts next-stage jobs of parent on exec; they inherit its
// workflow id and tenant unless they set their own.
func (c *Client) insertNext(ctx context.Context, exec driver.Executor, parent *JobRow, next []nextJob) ([]driver.InsertResult, error) {
	params := make([]*driver.InsertParams, len(next))
	queues := make([]string, len(next))
	for i, n := range next {
		opts := InsertOpts{}
		if n.opts != nil {
			opts = *n.opts
		}
		if opts.WorkflowID == "" {
			opts.WorkflowID = parent.WorkflowID
		}
		if opts.Tenant == "" {
			opts.Tenant = parent.Tenant
		}
		p, err := c.insertParams(n.args, &opts)
		if ve, ok := err.(*ValidationError); ok {
			return nil, invalid(fmt.Sprintf("next[%d].%s", i, ve.Field), "%s", ve.Message)
		}
		if err != nil {
			return nil, fmt.Errorf("next[%d]: %w", i, err)
		}
		params[i], queues[i] = p, p.Queue
	}
	var res []driver.InsertResult
	err := c.insertThrough(ctx, params, func(ctx context.Context) ([]int64, []bool, error) {
		var err error
		if res, err = exec.JobInsertMany(ctx, params); err != nil {
			return nil, nil, err
		}
		ids, dups := insertResultIDs(res)
		return ids, dups, nil
	})
	if err != nil {
		return nil, err
	}
	if err := c.wake.insertDone(exec, queues, false); err != nil {
		return nil, err
	}
	return res, nil
}
