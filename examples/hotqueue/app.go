package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/examples/internal/example"
)

// app is the original's services on Skiplock. Its data lives in Skiplock
// too: a video's metadata is its ingest job (kept in the archive for the
// retention, then in the vault), the watchlist is the schedules, and each
// tracking run's stats are the run's result, which retention moves to the
// vault's Parquet files. The app keeps in memory only what the example
// checks: which videos were tracked after their metadata went.
type app struct {
	client *skiplock.Client

	mu          sync.Mutex
	ghostTracks map[string]int
	views       int
}

func newApp() *app { return &app{ghostTracks: map[string]int{}} }

// videoTag tags a video's ingest job: the tracker finds the metadata by it.
func videoTag(id string) string { return "video:" + id }

// ingest puts a video on the watchlist; its job (payload and tag) is the
// video's metadata.
func (a *app) ingest(ctx context.Context, j *skiplock.Job[IngestArgs]) error {
	payload, _ := json.Marshal(TrackArgs{VideoID: j.Args.VideoID})
	_, err := a.client.ScheduleUpsert(ctx, &skiplock.Schedule{Key: videoTag(j.Args.VideoID),
		Kind: TrackArgs{}.Kind(), Queue: trackingQueue, Payload: payload, Every: tiers[j.Args.Tier]})
	if err != nil {
		return fmt.Errorf("add %s to the watchlist: %w", j.Args.VideoID, err)
	}
	example.Say("hunter: ingested %s %q, on the watchlist %s (every %s)", j.Args.VideoID, j.Args.Title, j.Args.Tier, tiers[j.Args.Tier])
	return nil
}

// track records a video's stats as the run's result, whether or not its
// metadata still exists.
func (a *app) track(ctx context.Context, j *skiplock.Job[TrackArgs]) error {
	known, err := a.client.JobList(ctx, skiplock.JobListParams{Kind: IngestArgs{}.Kind(),
		Tags: []string{videoTag(j.Args.VideoID)}, Limit: 1})
	if err != nil {
		return fmt.Errorf("look up video %s: %w", j.Args.VideoID, err)
	}
	a.mu.Lock()
	a.views++
	views := 1000 + a.views
	if len(known) == 0 {
		a.ghostTracks[j.Args.VideoID]++
		if a.ghostTracks[j.Args.VideoID] == 1 {
			example.Say("tracker: tracked %s, its metadata is gone: ghost tracking", j.Args.VideoID)
		}
	}
	a.mu.Unlock()
	return j.SetResult(Stats{VideoID: j.Args.VideoID, Views: views, At: time.Now().UTC()})
}

// Stats is a tracking run's result: the metrics row the original wrote to
// its vault.
type Stats struct {
	VideoID string    `json:"video_id"`
	Views   int       `json:"views"`
	At      time.Time `json:"at,omitzero"`
}

// waitGhostTracks waits until each video was tracked after its metadata
// went.
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
