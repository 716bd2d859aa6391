package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// DefaultQueueRecordInterval is how often the queue recorder runs; well
// within driver.QueueRecentWindow, the archive QueueList reads itself.
const DefaultQueueRecordInterval = time.Minute

// QueueRecorder records the queues of recently finished jobs as settings
// rows, so that a queue whose every job finished stays listed while
// QueueList reads only the last driver.QueueRecentWindow of the archive.
type QueueRecorder struct {
	Store    driver.ArchiveStore
	Interval time.Duration
	// Now is the clock the window is judged by (tests set it).
	Now    func() time.Time
	Logger *slog.Logger
}

// RunOnce records the queues of the jobs finished within the window.
func (r *QueueRecorder) RunOnce(ctx context.Context) error {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	return r.Store.QueueRecordArchived(ctx, now().Add(-driver.QueueRecentWindow))
}

// Run records every Interval until ctx ends.
func (r *QueueRecorder) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultQueueRecordInterval
	}
	runEvery(ctx, "queue recorder", interval, orLogger(r.Logger), r.RunOnce)
}
