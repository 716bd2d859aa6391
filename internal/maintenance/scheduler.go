package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Scheduler makes due scheduled jobs pending and releases waiting jobs whose
// parents all completed. A pass looks back only to the previous one (see
// lookback).
type Scheduler struct {
	Store    driver.Executor
	Interval time.Duration
	Limit    int
	Logger   *slog.Logger

	lookback lookback
}

// RunOnce promotes until nothing due is left, and wakes the queues that got
// work.
func (s *Scheduler) RunOnce(ctx context.Context) error {
	limit := s.Limit
	if limit <= 0 {
		limit = 5000
	}
	return s.lookback.run(limit, func(since time.Time) (int, time.Time, error) {
		res, err := s.Store.JobPromoteScheduled(ctx, limit, since)
		if err != nil {
			return 0, time.Time{}, err
		}
		if len(res.Queues) > 0 {
			if err := s.Store.QueueNotify(ctx, distinct(res.Queues)); err != nil {
				return 0, time.Time{}, err
			}
		}
		return len(res.Queues), res.Now, nil
	})
}

// Run promotes every Interval until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	runEvery(ctx, "scheduler", s.Interval, orLogger(s.Logger), s.RunOnce)
}

func distinct(in []string) []string {
	seen := map[string]bool{}
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
