package skiplock

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// producer claims jobs of one queue while it has free slots: at once when
// woken (an insert, a job made pending again, a finished job while there is
// a backlog), otherwise every poll interval. A job inserted through this
// client while the queue is idle skips the claim (startInserted).
type producer struct {
	client     *Client
	queue      string
	maxWorkers int
	claim      driver.ClaimParams
	active     atomic.Int64
	wake       chan struct{}
	// work hands claimed jobs to idle job goroutines. They stay for the
	// next job instead of one goroutine per job: a new goroutine grows its
	// stack again for every job.
	work chan *JobRow
	// jobNanos is a moving average of how long this queue's jobs run.
	jobNanos atomic.Int64
	// place is where the queue's last claim ended.
	place claimPlace
	// idle is set while the last claim left slots free: as far as this
	// producer knows, the queue has no pending job waiting for a slot. It
	// falls when a claim fills every slot or a wake-up finds none free.
	idle atomic.Bool
	// mu orders jobs started at their insert (startInserted) before run's
	// end: once stopped, no job starts.
	mu      sync.Mutex
	stopped bool
}

func newProducer(c *Client, queue string, qc QueueConfig) *producer {
	p := &producer{client: c, queue: queue, maxWorkers: qc.MaxWorkers, wake: make(chan struct{}, 1),
		work: make(chan *JobRow)}
	p.claim = driver.ClaimParams{Queue: queue, WorkerID: c.config.ID, DefaultLease: c.config.Lease,
		Fair: c.config.fairShare(queue)}
	for kind := range c.config.Workers.byKind {
		p.claim.Kinds = append(p.claim.Kinds, kind)
		p.claim.Leases = append(p.claim.Leases, c.policies[kind].lease)
	}
	return p
}

// topUpWait is the longest a backlogged producer waits for more free slots.
const topUpWait = 5 * time.Millisecond

// fastJob is the mean job duration under which a backlogged producer waits
// for every slot (up to topUpWait) before it claims again.
const fastJob = time.Millisecond

// minClaim is the smallest claim a backlogged producer makes before
// topUpWait has passed. Short jobs free their slots within microseconds of
// each other, so waiting for all of them turns many small claims into one
// (a claim of one job costs half as much as a claim of a hundred); long
// jobs free slots one by one, and a tenth of the slots is batch enough.
func (p *producer) minClaim() int {
	if time.Duration(p.jobNanos.Load()) < fastJob {
		return p.maxWorkers
	}
	return max(1, p.maxWorkers/10)
}

// observe folds one job's duration into the moving average (weight 1/16).
// Concurrent updates may drop a sample, which an average can afford.
func (p *producer) observe(d time.Duration) {
	old := p.jobNanos.Load()
	p.jobNanos.Store(old + (int64(d)-old)/16)
}

// emptyClaimBackoff is how many FetchCooldowns a claim waits after two in
// a row that found nothing. When several processes work a queue, every
// wake-up reaches all of them and all but one claim nothing: those claim
// again at most once a millisecond (at the default cooldown), not once a
// wake-up. A single empty claim (woken for a job an earlier claim took)
// does not slow the next.
const emptyClaimBackoff = 10

// cooldown is the least time between the last claim and the next when the
// last empty claims in a row found nothing.
func (p *producer) cooldown(empty int) time.Duration {
	if empty >= 2 {
		return emptyClaimBackoff * p.client.config.FetchCooldown
	}
	return p.client.config.FetchCooldown
}

func (p *producer) wakeUp() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *producer) run(ctx context.Context) {
	defer func() {
		p.idle.Store(false) // a stopped producer starts no insert
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
		close(p.work) // idle job goroutines end; busy ones after their job
	}()
	poll := time.NewTicker(p.pollInterval())
	defer poll.Stop()
	var last time.Time
	backlogged, empty := false, 0
	for {
		free := p.maxWorkers - int(p.active.Load())
		if backlogged && free < p.minClaim() {
			// A backlog is claimed in batches of at least minClaim jobs (or
			// after topUpWait): a claim costs about the same for one job as
			// for a hundred, so claiming each freed slot at once would cap
			// throughput at one job per claim round trip.
			if wait := topUpWait - time.Since(last); wait > 0 {
				t := time.NewTimer(wait)
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
		}
		if free > 0 {
			if wait := p.cooldown(empty) - time.Since(last); wait > 0 {
				time.Sleep(wait)
			}
			last = time.Now()
			n, err := p.fetch(ctx, free)
			if err != nil && ctx.Err() == nil {
				p.client.log.Warn("claim jobs", "queue", p.queue, "error", err)
			}
			if err == nil && n == 0 {
				empty++
			} else {
				empty = 0
			}
			backlogged = err == nil && n == free
			p.idle.Store(err == nil && n < free)
			if backlogged {
				continue // the queue may hold more
			}
		} else if p.idle.Swap(false) {
			// Woken with no slot free: there may be jobs to claim, so the
			// next slot to free up wakes this loop. A job that ended before
			// the flag fell read it set and did not: look at the slots again.
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-poll.C:
		}
	}
}

// works reports whether the producer claims jobs of kind.
func (p *producer) works(kind string) bool { return slices.Contains(p.claim.Kinds, kind) }

// reserve takes a slot for a job to start at its insert. It refuses while
// the producer has a backlog, so that an insert never starts ahead of
// pending jobs that this producer is about to claim, and when no slot is
// free.
func (p *producer) reserve() bool {
	if !p.idle.Load() {
		return false
	}
	for {
		n := p.active.Load()
		if n >= int64(p.maxWorkers) {
			return false
		}
		if p.active.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release gives back a slot that reserve took for a job that did not start.
func (p *producer) release() {
	p.active.Add(-1)
	p.wakeUp()
}

// startInserted runs row, a job started at its insert in a reserved slot.
// It answers false once the producer has stopped: then the job must be
// handed back.
func (p *producer) startInserted(row *JobRow) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.hand(row)
	return true
}

// hand gives row, whose slot is taken, to an idle job goroutine or a new one.
func (p *producer) hand(row *JobRow) {
	select {
	case p.work <- row:
	default:
		p.client.jobsWG.Go(func() { p.jobLoop(row) })
	}
}

func (p *producer) fetch(ctx context.Context, free int) (int, error) {
	if ctx.Err() != nil {
		return 0, nil
	}
	params := p.claim
	params.Max = free
	params.Flow = p.client.flowClaims(p.queue)
	// Not ctx: a claim cut off after its commit would strand the jobs
	// until their leases expire.
	claimCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jobs, err := p.place.claim(claimCtx, p.client.driver.JobClaim, params)
	if err != nil {
		return 0, err
	}
	for _, row := range jobs {
		p.active.Add(1)
		p.hand(row)
	}
	return len(jobs), nil
}

// jobLoop executes row, then each job handed to it, until the producer
// stops. A queue keeps at most about MaxWorkers of these: one is started only
// when no idle one is waiting, and a busy one is a running job.
func (p *producer) jobLoop(row *JobRow) {
	for {
		start := time.Now()
		p.client.execute(row)
		p.observe(time.Since(start))
		p.active.Add(-1)
		if !p.idle.Load() || p.client.flowClaims(p.queue) {
			// A backlog, or a wake-up that found no free slot: claim now.
			// An idle queue's new jobs wake the producer when inserted; a
			// job under flow rules may have held back another of its key.
			p.wakeUp()
		}
		var ok bool
		if row, ok = <-p.work; !ok {
			return
		}
	}
}
