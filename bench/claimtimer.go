package bench

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// claimTimer is a driver that times its claims (steady mode's claim_p95,
// and the claims during and after a latency run's During).
type claimTimer struct {
	driver.Driver
	mu    sync.Mutex
	times []time.Duration
	took  []claimTook // the claims that took a job
}

// claimTook is a claim that took at least one job: when it began, and how
// long it took.
type claimTook struct {
	start int64 // UnixNano
	d     time.Duration
}

func (c *claimTimer) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	start := time.Now()
	jobs, err := c.Driver.JobClaim(ctx, p)
	d := time.Since(start)
	c.mu.Lock()
	c.times = append(c.times, d)
	if len(jobs) > 0 {
		c.took = append(c.took, claimTook{start: start.UnixNano(), d: d})
	}
	c.mu.Unlock()
	return jobs, err
}

// tookBetween answers, sorted, the durations of the claims that took a job
// and began within [from, to] (to 0: no end).
func (c *claimTimer) tookBetween(from, to int64) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, t := range c.took {
		if t.start >= from && (to == 0 || t.start <= to) {
			out = append(out, t.d)
		}
	}
	slices.Sort(out)
	return out
}

// ClassifyError passes on the wrapped driver's classification.
func (c *claimTimer) ClassifyError(err error) error {
	if cl, ok := c.Driver.(driver.ErrorClassifier); ok {
		return cl.ClassifyError(err)
	}
	return err
}

// count answers how many claims were timed.
func (c *claimTimer) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.times)
}

// percentile answers the q-quantile of the claims' durations so far.
func (c *claimTimer) percentile(q float64) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := slices.Clone(c.times)
	slices.Sort(s)
	return percentile(s, q)
}

// UnwrapExecutor lets driver.As find the optional stores of the driver the
// timer wraps.
func (c *claimTimer) UnwrapExecutor() driver.Executor { return c.Driver }
