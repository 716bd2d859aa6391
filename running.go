package skiplock

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// runningJob is a job this process holds, from claim to flushed outcome.
type runningJob struct {
	client *Client
	row    *JobRow
	// ctx is the attempt's context, before its timeout: its cause tells
	// why it was cancelled.
	ctx context.Context
	// workCtx is the context work middleware handed the worker (nil
	// without middleware); next stages are inserted with its values.
	workCtx context.Context
	lease   time.Duration
	timeout time.Duration
	backoff func(int) time.Duration
	cancel  context.CancelCauseFunc
	result  json.RawMessage
	next    []nextJob
}

type nextJob struct {
	args JobArgs
	opts *InsertOpts
}

func (r *runningJob) held() driver.HeldJob {
	return driver.HeldJob{ID: r.row.ID, Attempt: r.row.Attempt, WorkerID: r.client.config.ID, Queue: r.row.Queue}
}

// report saves progress or a checkpoint, extending the lease; a lost lease
// or a cancel request cancels the job's context.
func (r *runningJob) report(ctx context.Context, p driver.ProgressParams) error {
	p.HeldJob, p.Lease = r.held(), r.lease
	h, err := r.client.driver.JobProgress(ctx, p)
	if err == driver.ErrLeaseLost {
		r.cancel(ErrLeaseLost)
	}
	if err != nil {
		return err
	}
	r.stopIfAsked(h.CancelRequested, h.PauseRequested)
	return nil
}

// stopIfAsked ends the job's context when it was asked to cancel or pause;
// a cancel wins over a pause.
func (r *runningJob) stopIfAsked(cancel, pause bool) {
	switch {
	case cancel:
		r.cancel(ErrCancelled)
	case pause:
		r.cancel(ErrPaused)
	}
}

// runningSet holds the running jobs of a process and heartbeats them all in
// one statement.
type runningSet struct {
	client *Client
	mu     sync.Mutex
	jobs   map[int64]*runningJob
}

func newRunningSet(c *Client) *runningSet {
	return &runningSet{client: c, jobs: map[int64]*runningJob{}}
}

func (s *runningSet) add(r *runningJob) {
	s.mu.Lock()
	s.jobs[r.row.ID] = r
	s.mu.Unlock()
}

// get answers attempt `attempt` of a job, if this process holds it.
func (s *runningSet) get(id int64, attempt int) *runningJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.jobs[id]; r != nil && r.row.Attempt == attempt {
		return r
	}
	return nil
}

// remove forgets attempt `attempt` of a job; a newer attempt of the same job
// (rescued, then claimed here again) stays.
func (s *runningSet) remove(id int64, attempt int) {
	s.mu.Lock()
	if r := s.jobs[id]; r != nil && r.row.Attempt == attempt {
		delete(s.jobs, id)
	}
	s.mu.Unlock()
}

func (s *runningSet) cancel(id int64, cause error) {
	s.mu.Lock()
	r := s.jobs[id]
	s.mu.Unlock()
	if r != nil {
		r.cancel(cause)
	}
}

func (s *runningSet) cancelAll(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.jobs {
		r.cancel(cause)
	}
}

// interval is a third of the shortest lease of the kinds this client
// works (Start settled them), so two beats can fail before a lease runs
// out.
func (s *runningSet) interval() time.Duration {
	if s.client.config.HeartbeatInterval > 0 {
		return s.client.config.HeartbeatInterval
	}
	shortest := s.client.config.Lease
	for _, p := range s.client.policies {
		shortest = min(shortest, p.lease)
	}
	return max(shortest/3, 100*time.Millisecond)
}

func (s *runningSet) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(s.interval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.beat(ctx); err != nil && ctx.Err() == nil {
				s.client.log.Warn("heartbeat failed", "error", err)
			}
		}
	}
}

// beat extends every lease this process holds; jobs it no longer holds
// (rescued elsewhere) or that were asked to cancel have their context
// cancelled.
func (s *runningSet) beat(ctx context.Context) error {
	s.mu.Lock()
	p := driver.HeartbeatParams{WorkerID: s.client.config.ID}
	held := make(map[int64]*runningJob, len(s.jobs))
	for id, r := range s.jobs {
		p.IDs = append(p.IDs, id)
		p.Attempts = append(p.Attempts, r.row.Attempt)
		p.Leases = append(p.Leases, r.lease)
		p.Queues = append(p.Queues, r.row.Queue)
		held[id] = r
	}
	s.mu.Unlock()
	if len(p.IDs) == 0 {
		return nil
	}
	res, err := s.client.driver.JobHeartbeat(ctx, p)
	if err != nil {
		return err
	}
	for _, h := range res {
		held[h.ID].stopIfAsked(h.CancelRequested, h.PauseRequested)
		delete(held, h.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, r := range held {
		if s.jobs[id] != r {
			continue // finished while the beat was out
		}
		s.client.log.Warn("lease lost", jobAttr(r.row))
		r.cancel(ErrLeaseLost)
	}
	return nil
}
