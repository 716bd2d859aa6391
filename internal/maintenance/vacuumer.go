package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Vacuumer keeps the hot table from bloating under churn: it vacuums when
// dead rows pile up, far more often than autovacuum's one-minute naptime.
type Vacuumer struct {
	Store    driver.ArchiveStore
	Interval time.Duration
	// DeadRows is how many dead rows make a vacuum worth it (default 20,000).
	DeadRows int64
	Logger   *slog.Logger
}

// RunOnce vacuums the hot table if it needs it.
func (v *Vacuumer) RunOnce(ctx context.Context) error {
	dead := v.DeadRows
	if dead <= 0 {
		dead = 20000
	}
	did, err := v.Store.HotTableVacuum(ctx, dead)
	if did {
		orLogger(v.Logger).Debug("vacuumed the hot table")
	}
	return err
}

// Run vacuums when needed every Interval (default 10 s) until ctx ends.
func (v *Vacuumer) Run(ctx context.Context) {
	interval := v.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	runEvery(ctx, "vacuumer", interval, orLogger(v.Logger), v.RunOnce)
}
