package skiplock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Outcome is what became of a job worked by Drain or WorkJob.
type Outcome struct {
	// Job is the job as stored after the attempt: completed, scheduled
	// for a retry, failed, cancelled, or pending again (a snooze).
	Job *JobRow
	// Err is the attempt's error; nil when it succeeded.
	Err error
}

// Drain works the jobs that are due now in the client's queues
// (Config.Queues), one at a time on the calling goroutine, until none is
// left or ctx ends, and answers what became of each in the order they ran.
// Each attempt goes through the client's middleware, error handler and
// events as in a started client; a job that failed and is due again at once
// runs again. It is for tests and one-shot programs: a started client works
// its jobs itself and answers an error here.
func (c *Client) Drain(ctx context.Context) ([]Outcome, error) {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	switch {
	case started:
		return nil, errors.New("skiplock: drain: the client is started and works its jobs itself")
	case len(c.config.Queues) == 0:
		return nil, errors.New("skiplock: drain: the client has no Queues to work")
	}
	var out []Outcome
	for ctx.Err() == nil {
		row, err := c.claimOne(ctx)
		if err != nil {
			return out, fmt.Errorf("skiplock: drain: %w", err)
		}
		if row == nil {
			return out, nil
		}
		o, err := c.workNow(ctx, row, c.config.Workers.byKind[row.Kind], c.policies[row.Kind])
		if err != nil {
			return out, fmt.Errorf("skiplock: drain: %w", err)
		}
		out = append(out, *o)
	}
	return out, ctx.Err()
}

// claimOne claims one due job of the client's workers from any of its
// queues, or answers nil when there is none.
func (c *Client) claimOne(ctx context.Context) (*JobRow, error) {
	for queue := range c.config.Queues {
		p := driver.ClaimParams{Queue: queue, WorkerID: c.config.ID, Max: 1, DefaultLease: c.config.Lease,
			Flow: c.flowClaims(queue), Fair: c.config.fairShare(queue)}
		for kind := range c.config.Workers.byKind {
			p.Kinds = append(p.Kinds, kind)
			p.Leases = append(p.Leases, c.policies[kind].lease)
		}
		jobs, err := c.driver.JobClaim(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("claim from queue %q: %w", queue, err)
		}
		if len(jobs) > 0 {
			return jobs[0], nil
		}
	}
	return nil, nil
}

// WorkJob inserts a job of args through c (and its insert middleware) and
// works it at once on the calling goroutine with w, which need not be
// registered, through c's work middleware, error handler and events; it
// answers what became of the job. The job must be due now, without an
// idempotency key or dependencies, in a queue that is not paused. It is for
// tests: skiplocktest.Work wraps it.
func WorkJob[T JobArgs](ctx context.Context, c *Client, w Worker[T], args T, opts *InsertOpts) (*Outcome, error) {
	p, err := c.insertParams(args, opts)
	if err != nil {
		return nil, err
	}
	switch {
	case !p.Plain():
		return nil, invalid("opts", "WorkJob works a job without idempotency key or dependencies")
	case p.Flow != nil:
		return nil, invalid("opts", "WorkJob works a job that no flow rule limits")
	case p.RunAt.After(time.Now()):
		return nil, invalid("run_at", "WorkJob works a job that is due now")
	}
	pol, ok := c.policies[p.Kind]
	if !ok {
		pol = c.policyOf(p.Kind, WorkerOpts{})
	}
	var row *JobRow
	err = c.insertThrough(ctx, []*driver.InsertParams{p}, func(ctx context.Context) ([]int64, []bool, error) {
		var err error
		row, err = c.driver.JobInsertStart(ctx, p, driver.StartParams{WorkerID: c.config.ID, Lease: pol.lease})
		if err != nil {
			return nil, nil, fmt.Errorf("insert job of kind %q: %w", p.Kind, err)
		}
		return []int64{row.ID}, []bool{false}, nil
	})
	if err != nil {
		return nil, err
	}
	if row.State != StateRunning {
		return nil, fmt.Errorf("skiplock: work job %d: it did not start (%s): is queue %q paused?", row.ID, row.State, row.Queue)
	}
	return c.workNow(ctx, row, newRegisteredWorker(p.Kind, w), pol)
}

// workNow works row, a job this client holds, records its outcome at once
// and reads the job back.
func (c *Client) workNow(ctx context.Context, row *JobRow, w *registeredWorker, pol kindPolicy) (*Outcome, error) {
	var run *runningJob
	var err error
	if w == nil {
		run, err = &runningJob{client: c, row: row}, Permanent(fmt.Errorf("no worker for kind %q", row.Kind))
	} else {
		run, err = c.attempt(row, w, pol)
	}
	c.finish(run, err, true)
	c.flushHistoryUnstarted(ctx)
	j, gerr := c.driver.JobGet(ctx, row.ID)
	if gerr != nil {
		return nil, fmt.Errorf("read job %d back: %w", row.ID, gerr)
	}
	return &Outcome{Job: j, Err: err}, nil
}
