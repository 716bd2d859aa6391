// Command hotqueue rebuilds the hot queue with ghost tracking on
// Skiplock: ingestion jobs leave the hot table for the archive as they
// finish; the watchlist is one recurring schedule per video, its tracking
// tier an interval; the app's janitor deletes expired video metadata, with
// a dry run and a safety check, and tracking goes on without it.
//
// Time is scaled down: an "hour" of the original is a second here.
//
//	go run ./examples/hotqueue [--database-url postgres://…] [-v]
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/examples/internal/example"
)

// Tracking tiers: how often a video on the watchlist is tracked.
var tiers = map[string]time.Duration{"HOURLY": time.Second, "DAILY": 2 * time.Second}

// retention is how long the app keeps a video's metadata (the original's 7 days).
const retention = 1500 * time.Millisecond

// IngestArgs is a video Hunter discovered.
type IngestArgs struct {
	VideoID string `json:"video_id"`
	Title   string `json:"title"`
	Tier    string `json:"tier"`
}

func (IngestArgs) Kind() string { return "ingest_video" }

// TrackArgs is one tracking run of a watchlist entry.
type TrackArgs struct {
	VideoID string `json:"video_id"`
}

func (TrackArgs) Kind() string { return "track_video" }

// JanitorArgs is one janitor cycle over the app's videos table.
type JanitorArgs struct {
	DryRun bool `json:"dry_run"`
}

func (JanitorArgs) Kind() string { return "janitor" }

func main() { example.Run("hotqueue", run) }

func run(ctx context.Context, env example.Env) error {
	app := newApp()
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[IngestArgs](app.ingest))
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[TrackArgs](app.track))
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[JanitorArgs](app.janitor))
	client, err := skiplock.NewClient(env.Driver, &skiplock.Config{
		Workers: workers, Logger: env.Logger, SchedulerInterval: 100 * time.Millisecond,
		Queues: map[string]skiplock.QueueConfig{skiplock.DefaultQueue: {MaxWorkers: 4}},
	})
	if err != nil {
		return err
	}
	app.client = client
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer example.Stop(client)

	// Day 0: Hunter discovers three videos.
	if err := discover(ctx, client, IngestArgs{"v1", "Cats", "HOURLY"}, IngestArgs{"v2", "Dogs", "HOURLY"},
		IngestArgs{"v3", "Lakes", "DAILY"}); err != nil {
		return err
	}
	// Day 7: the metadata expired. A dry run first, then the janitor; a new
	// discovery keeps the safety check ("would delete everything") quiet.
	time.Sleep(retention)
	if err := discover(ctx, client, IngestArgs{"v4", "Birds", "DAILY"}); err != nil {
		return err
	}
	for _, dry := range []bool{true, false} {
		if err := runJob(ctx, client, JanitorArgs{DryRun: dry}); err != nil {
			return err
		}
	}
	// Day 8+: ghost tracking goes on for the deleted videos.
	if err := app.waitGhostTracks(ctx, "v1", "v2", "v3"); err != nil {
		return err
	}
	return report(ctx, client, app)
}

// discover ingests videos and waits until their jobs finished.
func discover(ctx context.Context, c *skiplock.Client, videos ...IngestArgs) error {
	for _, v := range videos {
		if err := runJob(ctx, c, v); err != nil {
			return err
		}
	}
	return nil
}

// runJob enqueues a job and waits for it to complete.
func runJob(ctx context.Context, c *skiplock.Client, args skiplock.JobArgs) error {
	res, err := c.Insert(ctx, args, nil)
	if err != nil {
		return err
	}
	j, err := example.WaitFinished(ctx, c, res.Job.ID)
	if err != nil {
		return err
	}
	if j.State != skiplock.StateCompleted {
		return fmt.Errorf("job %d %s: %s", j.ID, j.Kind, j.State)
	}
	return nil
}

// report shows the watchlist, the hot table and the archive, and checks
// them.
func report(ctx context.Context, c *skiplock.Client, app *app) error {
	schedules, err := c.ScheduleList(ctx, nil)
	if err != nil {
		return err
	}
	example.Say("watchlist: %d schedules (the videos table has %d rows)", len(schedules), app.videoCount())
	for _, s := range schedules {
		example.Say("  %s every %s, next run %s", s.Key, s.Every, s.NextRunAt.Format(time.TimeOnly))
	}
	if len(schedules) != 4 {
		return fmt.Errorf("watchlist: want 4 schedules, got %d", len(schedules))
	}
	live, err := c.QueueList(ctx, false)
	if err != nil {
		return err
	}
	all, err := c.QueueList(ctx, true)
	if err != nil {
		return err
	}
	hot := int64(0)
	for _, q := range live {
		for _, n := range q.Counts {
			hot += n
		}
	}
	archived := int64(0)
	for _, q := range all {
		archived += q.Counts[skiplock.StateCompleted]
	}
	example.Say("hot table: %d live jobs (at most the current tracking runs); archive: %d completed jobs", hot, archived)
	example.Say("vault: %d metric rows, e.g. %s", len(app.vault), app.vault[0])
	// 4 ingests, 2 janitor runs and a track run per schedule at least.
	if archived < 10 || hot > 4 {
		return fmt.Errorf("want the finished jobs in the archive and at most one live track job per video, got %d archived, %d live", archived, hot)
	}
	return nil
}
