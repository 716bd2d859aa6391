package skiplock

import (
	"context"
	"errors"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// stopRequests looks up whether jobs running here were asked to cancel or
// pause, and ends their contexts with the cause (a notification names the
// job, not what it was asked).
func (s *runningSet) stopRequests(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	reqs, err := s.client.driver.JobStopRequests(ctx, ids)
	if errors.Is(err, driver.ErrUnsupported) {
		return nil // no stop requests without the store: cancels come with heartbeats
	}
	if err != nil {
		return err
	}
	for _, r := range reqs {
		s.mu.Lock()
		run := s.jobs[r.ID]
		s.mu.Unlock()
		if run != nil {
			run.stopIfAsked(r.Cancel, r.Pause)
		}
	}
	return nil
}

// heldIDs answers the ids of the jobs running here.
func (s *runningSet) heldIDs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	return ids
}

// holds reports whether job id runs here.
func (s *runningSet) holds(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobs[id] != nil
}

// StopPollInterval is how often a client running jobs looks for cancel and
// pause requests made by other processes: one primary-key read of its
// running jobs. On PostgreSQL NOTIFY carries them at once; the look catches
// one that came before its job ran here, or while the listener reconnected.
const StopPollInterval = time.Second

// pollStops looks for stop requests every StopPollInterval until ctx ends.
func (s *runningSet) pollStops(ctx context.Context) {
	t := time.NewTicker(StopPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.stopRequests(ctx, s.heldIDs()); err != nil && ctx.Err() == nil {
				s.client.log.Warn("look up stop requests", "error", err)
			}
		}
	}
}
