// Package maintenance holds the background services a client runs: the
// leader elector (elector.go), and under its leadership the rescuer, the
// scheduler, the partitioner, the vacuumer, the key pruner, the flow
// sweeper, the janitor (janitor.go, janitor_plan.go, janitor_delete.go,
// janitor_fold.go; its policy in retention.go), the periodic enqueuer and
// the schedule enqueuer. Each has a Run loop and a RunOnce that tests call
// directly.
package maintenance

import (
	"context"
	"log/slog"
	"time"
)

// runEvery calls fn now and then every interval until ctx ends; errors are
// logged and the loop goes on (the database may come back).
func runEvery(ctx context.Context, name string, interval time.Duration, log *slog.Logger, fn func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			log.Warn("maintenance run failed", "service", name, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runDraining is runEvery for a service whose run is bounded: while a run
// stops at its bound (more), the next comes drainAgain later rather than
// an interval later, so that a backlog larger than a run does not wait an
// interval per run and pile up.
func runDraining(ctx context.Context, name string, interval time.Duration, log *slog.Logger,
	once func(context.Context) (more bool, err error)) {
	runEvery(ctx, name, interval, log, func(ctx context.Context) error {
		for {
			more, err := once(ctx)
			if err != nil || !more {
				return err
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(drainAgain):
			}
		}
	})
}

// drainAgain is the pause between two bounded runs that each hit their
// bound.
const drainAgain = time.Second

func orLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
