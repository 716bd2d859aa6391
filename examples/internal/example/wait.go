package example

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock"
)

// WaitJob polls job id until done answers true, and answers the job.
func WaitJob(ctx context.Context, c *skiplock.Client, id int64, done func(*skiplock.JobRow) bool) (*skiplock.JobRow, error) {
	for {
		j, err := c.JobGet(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("get job %d: %w", id, err)
		}
		if done(j) {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for job %d (now %s): %w", id, j.State, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// WaitFinished waits until job id is completed, failed or cancelled.
func WaitFinished(ctx context.Context, c *skiplock.Client, id int64) (*skiplock.JobRow, error) {
	return WaitJob(ctx, c, id, func(j *skiplock.JobRow) bool { return j.State.Finished() })
}

// WaitWorkflow polls a workflow until no job of it is live.
func WaitWorkflow(ctx context.Context, c *skiplock.Client, id string) (*skiplock.WorkflowView, error) {
	for {
		v, err := c.Workflow(ctx, id)
		if err == nil && v.Status != skiplock.WorkflowRunning {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for workflow %s: %w", id, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop stops a client, giving running jobs a few seconds.
func Stop(c *skiplock.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Stop(ctx)
}
