package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Partitioner keeps the archive ready for the next days' finished jobs.
type Partitioner struct {
	Store    driver.ArchiveStore
	Interval time.Duration
	// Ahead is how far ahead partitions exist (default three days).
	Ahead  time.Duration
	Logger *slog.Logger
	Now    func() time.Time
}

// RunOnce prepares the archive up to now + Ahead.
func (p *Partitioner) RunOnce(ctx context.Context) error {
	now, ahead := time.Now, p.Ahead
	if p.Now != nil {
		now = p.Now
	}
	if ahead <= 0 {
		ahead = 72 * time.Hour
	}
	return p.Store.ArchivePrepare(ctx, now().Add(ahead))
}

// Run prepares every Interval (default hourly) until ctx ends.
func (p *Partitioner) Run(ctx context.Context) {
	interval := p.Interval
	if interval <= 0 {
		interval = time.Hour
	}
	runEvery(ctx, "partitioner", interval, orLogger(p.Logger), p.RunOnce)
}
