package skiplock

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/skiplock/skiplock/driver"
)

// MaxTenantWeight is the largest weight Fairness gives a tenant.
const MaxTenantWeight = 1000

// Fairness shares a queue between its tenants (Config.Fairness): each
// claim gives every tenant with pending jobs a share in proportion to its
// weight, so that a tenant that enqueued a million jobs cannot starve one
// that enqueued ten. Inside a tenant, jobs keep their claim order
// (priority, then run_at). See docs/flow-control.md.
type Fairness struct {
	// Weights weighs tenants apart, from 1 to MaxTenantWeight; a tenant
	// not named weighs 1. A tenant of weight 3 gets about three times the
	// jobs of a tenant of weight 1 while both have a backlog.
	Weights map[string]int
}

func validateFairness(queues map[string]Fairness) error {
	for queue, f := range queues {
		if queue == "" {
			return fmt.Errorf("config: Fairness: queue name must not be empty")
		}
		for tenant, w := range f.Weights {
			if w < 1 || w > MaxTenantWeight {
				return fmt.Errorf("config: Fairness[%q].Weights[%q]: must be between 1 and %d, got %d",
					queue, tenant, MaxTenantWeight, w)
			}
		}
	}
	return nil
}

// fairShare answers the driver's fair share of queue's claims, or nil when
// the queue's claims are not shared between tenants.
func (c Config) fairShare(queue string) *driver.FairShare {
	f, ok := c.Fairness[queue]
	if !ok {
		return nil
	}
	share := &driver.FairShare{Tenants: []string{}, Weights: []int{}}
	for _, t := range slices.Sorted(maps.Keys(f.Weights)) {
		if w := f.Weights[t]; w != 1 {
			share.Tenants, share.Weights = append(share.Tenants, t), append(share.Weights, w)
		}
	}
	return share
}

// ensureFairIndex makes the index that fair claims read (driver.FairIndexer)
// in the background: on PostgreSQL a concurrent build waits out the
// transactions open on the hot table, and Start must not. Until it is
// there, fair claims are right, only slower behind a large backlog.
func (c *Client) ensureFairIndex(ctx context.Context) {
	fi, err := driver.As[driver.FairIndexer](c.driver)
	if err != nil {
		return
	}
	if err := fi.FairIndexEnsure(ctx); err != nil && ctx.Err() == nil {
		c.log.Warn("fair claims go without the tenant claim index", "error", err)
	}
}
