package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/examples/internal/example"
)

// app is the original's own data: the ephemeral videos table and the vault of
// metrics. The jobs and the watchlist live in Skiplock.
type app struct {
	client *skiplock.Client

	mu          sync.Mutex
	videos      map[string]time.Time // video id → discovered_at
	vault       []string
	ghostTracks map[string]int
}

func newApp() *app {
	return &app{videos: map[string]time.Time{}, ghostTracks: map[string]int{}}
}

// ingest stores a video's metadata and puts it on the watchlist.
func (a *app) ingest(ctx context.Context, j *skiplock.Job[IngestArgs]) error {
	a.mu.Lock()
	a.videos[j.Args.VideoID] = time.Now()
	a.mu.Unlock()
	payload, _ := json.Marshal(TrackArgs{VideoID: j.Args.VideoID})
	_, err := a.client.ScheduleUpsert(ctx, &skiplock.Schedule{Key: "video:" + j.Args.VideoID,
		Kind: TrackArgs{}.Kind(), Payload: payload, Every: tiers[j.Args.Tier]})
	if err != nil {
		return fmt.Errorf("add %s to the watchlist: %w", j.Args.VideoID, err)
	}
	example.Say("hunter: ingested %s %q, on the watchlist %s (every %s)", j.Args.VideoID, j.Args.Title, j.Args.Tier, tiers[j.Args.Tier])
	return nil
}

// track writes a video's stats to the vault, whether or not its metadata
// still exists.
func (a *app) track(ctx context.Context, j *skiplock.Job[TrackArgs]) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now().UTC()
	a.vault = append(a.vault, fmt.Sprintf("metrics/date=%s/hour=%02d video=%s views=%d",
		now.Format(time.DateOnly), now.Hour(), j.Args.VideoID, 1000+len(a.vault)))
	if _, ok := a.videos[j.Args.VideoID]; ok {
		return nil
	}
	a.ghostTracks[j.Args.VideoID]++
	if a.ghostTracks[j.Args.VideoID] == 1 {
		example.Say("tracker: tracked %s, its metadata is gone: ghost tracking", j.Args.VideoID)
	}
	return nil
}

// janitor deletes videos discovered before the retention cutoff; the
// watchlist is not touched.
func (a *app) janitor(ctx context.Context, j *skiplock.Job[JanitorArgs]) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	cutoff := time.Now().Add(-retention)
	var expired []string
	recent := 0
	for id, at := range a.videos {
		if at.Before(cutoff) {
			expired = append(expired, id)
		} else {
			recent++
		}
	}
	if recent == 0 {
		return skiplock.Permanent(errors.New("SAFETY: would delete all videos"))
	}
	if j.Args.DryRun {
		example.Say("janitor: dry run: would delete %d videos (cutoff %s)", len(expired), cutoff.Format(time.TimeOnly))
		return j.SetResult(map[string]int{"would_delete": len(expired)})
	}
	for _, id := range expired {
		delete(a.videos, id)
	}
	example.Say("janitor: deleted %d videos, kept %d; the watchlist is untouched", len(expired), recent)
	return j.SetResult(map[string]int{"deleted": len(expired)})
}

func (a *app) videoCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.videos)
}

// waitGhostTracks waits until each video was tracked after its deletion.
func (a *app) waitGhostTracks(ctx context.Context, ids ...string) error {
	for {
		a.mu.Lock()
		done := true
		for _, id := range ids {
			done = done && a.ghostTracks[id] > 0
		}
		a.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for ghost tracking of %v: %w", ids, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
