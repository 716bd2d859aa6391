// Package maintenance holds the background services a client runs: the
// leader elector, and under its leadership the rescuer, the scheduler and
// the archive partitioner. Each has a RunOnce that tests call directly.
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

func orLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
