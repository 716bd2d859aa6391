package bench

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// claimTimer is a driver that times its claims (steady mode's claim_p95).
type claimTimer struct {
	driver.Driver
	mu    sync.Mutex
	times []time.Duration
}

func (c *claimTimer) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	start := time.Now()
	jobs, err := c.Driver.JobClaim(ctx, p)
	d := time.Since(start)
	c.mu.Lock()
	c.times = append(c.times, d)
	c.mu.Unlock()
	return jobs, err
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
