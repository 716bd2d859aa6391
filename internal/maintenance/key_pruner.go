package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Defaults of the key pruner.
const (
	DefaultKeyPruneInterval  = time.Minute
	DefaultKeyPruneBatchSize = 1000
	// DefaultKeyPruneMaxBatches bounds one run, so that a large backlog
	// drains over several runs without one long stretch of deletes.
	DefaultKeyPruneMaxBatches = 100
)

// KeyPruner deletes idempotency keys whose window has passed and whose job
// is no longer live: without it the table of window keys only grows.
type KeyPruner struct {
	Store      driver.ArchiveStore
	Interval   time.Duration
	BatchSize  int
	MaxBatches int
	// Now is the clock the windows are judged by (tests set it).
	Now    func() time.Time
	Logger *slog.Logger
}

func (p *KeyPruner) withDefaults() KeyPruner {
	c := *p
	if c.Interval <= 0 {
		c.Interval = DefaultKeyPruneInterval
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultKeyPruneBatchSize
	}
	if c.MaxBatches <= 0 {
		c.MaxBatches = DefaultKeyPruneMaxBatches
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Logger = orLogger(c.Logger)
	return c
}

// RunOnce deletes expired keys in batches until a batch comes back short
// or MaxBatches ran, and answers how many it deleted.
func (p *KeyPruner) RunOnce(ctx context.Context) (int, error) {
	c := p.withDefaults()
	before, total := c.Now(), 0
	for range c.MaxBatches {
		n, err := c.Store.UniqueKeyPrune(ctx, before, c.BatchSize)
		total += n
		if err != nil || n < c.BatchSize {
			if total > 0 {
				c.Logger.Debug("pruned idempotency keys", "keys", total)
			}
			return total, err
		}
	}
	return total, nil
}

// Run prunes every Interval until ctx ends. A run that hit MaxBatches
// runs again a second later rather than an Interval later: keys that
// expire faster than a run deletes in an Interval would pile up.
func (p *KeyPruner) Run(ctx context.Context) {
	c := p.withDefaults()
	runDraining(ctx, "key pruner", c.Interval, c.Logger, func(ctx context.Context) (bool, error) {
		n, err := p.RunOnce(ctx)
		return n >= c.MaxBatches*c.BatchSize, err
	})
}
