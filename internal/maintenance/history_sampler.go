package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// DefaultHistorySampleInterval is how often the leader samples the depth
// of every queue into the history: once a minute, the history's grain.
const DefaultHistorySampleInterval = time.Minute

// HistorySampler records the live jobs of every queue and kind, by state,
// as the sample of the current minute (the depth the charts draw).
type HistorySampler struct {
	Store    driver.HistoryStore
	Interval time.Duration
	// Now is the clock the minute is taken from (tests set it).
	Now    func() time.Time
	Logger *slog.Logger
}

// RunOnce samples the depth now.
func (s *HistorySampler) RunOnce(ctx context.Context) error {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return s.Store.HistorySampleDepth(ctx, now().UTC().Truncate(time.Minute))
}

// Run samples every Interval until ctx ends.
func (s *HistorySampler) Run(ctx context.Context) {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultHistorySampleInterval
	}
	runEvery(ctx, "history sampler", interval, orLogger(s.Logger), s.RunOnce)
}
