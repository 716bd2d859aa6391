package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Defaults of the flow sweeper.
const (
	DefaultFlowSweepInterval = time.Minute
	// DefaultFlowSweepIdle is how long none of a key's jobs has started
	// before the key may be dropped: a key in steady use keeps its slots
	// and bucket rather than making them again for each job.
	DefaultFlowSweepIdle       = 10 * time.Minute
	DefaultFlowSweepBatchSize  = 1000
	DefaultFlowSweepMaxBatches = 100
)

// FlowSweeper drops the slots and buckets of idle flow keys: without it, a
// rule keyed by a payload property or a user keeps rows for every value it
// ever saw, and each read of the keys' use reads them all.
type FlowSweeper struct {
	Store     driver.FlowStore
	Interval  time.Duration
	Idle      time.Duration
	BatchSize int
	// MaxBatches bounds one run; a pass over many keys spans runs.
	MaxBatches int
	// Now is the clock idleness is judged by (tests set it).
	Now    func() time.Time
	Logger *slog.Logger

	after string // the last key read: the next batch starts after it
}

func (s *FlowSweeper) withDefaults() FlowSweeper {
	c := *s
	c.Logger = orLogger(c.Logger)
	if c.Interval <= 0 {
		c.Interval = DefaultFlowSweepInterval
	}
	if c.Idle <= 0 {
		c.Idle = DefaultFlowSweepIdle
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultFlowSweepBatchSize
	}
	if c.MaxBatches <= 0 {
		c.MaxBatches = DefaultFlowSweepMaxBatches
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// RunOnce sweeps batch by batch from where the last run stopped, until the
// keys run out (the next run starts again from the first) or MaxBatches
// ran. It answers how many keys it dropped and whether it read the last.
func (s *FlowSweeper) RunOnce(ctx context.Context) (dropped int, ended bool, err error) {
	c := s.withDefaults()
	before := c.Now().Add(-c.Idle)
	defer func() {
		if dropped > 0 {
			c.Logger.Debug("dropped idle flow keys", "keys", dropped)
		}
	}()
	for range c.MaxBatches {
		r, err := c.Store.FlowSweep(ctx, driver.FlowSweepParams{After: s.after, Before: before, Limit: c.BatchSize})
		if err != nil {
			return dropped, false, err
		}
		dropped += r.Dropped
		if r.Read < c.BatchSize {
			s.after = ""
			return dropped, true, nil
		}
		s.after = r.Last
	}
	return dropped, false, nil
}

// Run sweeps every Interval until ctx ends. A run that stopped at
// MaxBatches before the last key runs again a second later rather than an
// Interval later, so that a pass over many keys does not take hours.
func (s *FlowSweeper) Run(ctx context.Context) {
	c := s.withDefaults()
	runDraining(ctx, "flow sweeper", c.Interval, c.Logger, func(ctx context.Context) (bool, error) {
		_, ended, err := s.RunOnce(ctx)
		return !ended, err
	})
}
