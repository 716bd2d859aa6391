package skiplock

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// producer claims jobs of one queue while it has free slots: at once when
// woken (insert, finished job), otherwise every poll interval.
type producer struct {
	client     *Client
	queue      string
	maxWorkers int
	claim      driver.ClaimParams
	active     atomic.Int64
	wake       chan struct{}
}

func newProducer(c *Client, queue string, qc QueueConfig) *producer {
	p := &producer{client: c, queue: queue, maxWorkers: qc.MaxWorkers, wake: make(chan struct{}, 1)}
	p.claim = driver.ClaimParams{Queue: queue, WorkerID: c.config.ID, DefaultLease: c.config.Lease}
	for kind := range c.config.Workers.byKind {
		p.claim.Kinds = append(p.claim.Kinds, kind)
		p.claim.Leases = append(p.claim.Leases, c.policies[kind].lease)
	}
	return p
}

// topUpWait is the longest a backlogged producer waits for more free slots.
const topUpWait = 5 * time.Millisecond

func (p *producer) minClaim() int { return max(1, p.maxWorkers/10) }

func (p *producer) wakeUp() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *producer) run(ctx context.Context) {
	poll := time.NewTicker(p.client.config.FetchPollInterval)
	defer poll.Stop()
	var last time.Time
	backlogged := false
	for {
		free := p.maxWorkers - int(p.active.Load())
		if backlogged && free > 0 && free < p.minClaim() && time.Since(last) < topUpWait {
			// A backlog is claimed in batches of at least a tenth of the
			// slots (or after topUpWait): claims of a few jobs each cost a
			// statement and a commit apiece.
			t := time.NewTimer(topUpWait - time.Since(last))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-p.wake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		backlogged = false
		if free > 0 {
			if wait := p.client.config.FetchCooldown - time.Since(last); wait > 0 {
				time.Sleep(wait)
			}
			last = time.Now()
			n, err := p.fetch(ctx, free)
			if err != nil && ctx.Err() == nil {
				p.client.log.Warn("claim jobs", "queue", p.queue, "error", err)
			}
			if err == nil && n == free {
				backlogged = true
				continue // the queue may hold more
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-poll.C:
		}
	}
}

func (p *producer) fetch(ctx context.Context, free int) (int, error) {
	if ctx.Err() != nil {
		return 0, nil
	}
	params := p.claim
	params.Max = free
	// Not ctx: a claim cut off after its commit would strand the jobs
	// until their leases expire.
	claimCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jobs, err := p.client.driver.JobClaim(claimCtx, params)
	if err != nil {
		return 0, err
	}
	for _, row := range jobs {
		p.active.Add(1)
		p.client.jobsWG.Go(func() {
			defer func() {
				p.active.Add(-1)
				p.wakeUp()
			}()
			p.client.execute(row)
		})
	}
	return len(jobs), nil
}
