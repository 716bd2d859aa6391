// Command hotqueue rebuilds the hot queue with ghost tracking on
// Skiplock: ingestion jobs leave the hot table for the archive as they
// finish; a video's metadata is its ingest job; the watchlist is one
// recurring schedule per video, its tracking tier an interval; each
// tracking run's stats are its result. Skiplock's retention, with a dry run
// and its safety check, deletes the expired metadata and the old runs,
// storing them in a Parquet vault first; tracking goes on without the
// metadata, and the vault's files are read back at the end.
//
// Time is scaled down: a day of the original is a fraction of a second.
//
//	go run ./examples/hotqueue [--database-url postgres://…] [-v]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/examples/internal/example"
	"github.com/skiplock/skiplock/vault"
)

// Tracking tiers: how often a video on the watchlist is tracked.
var tiers = map[string]time.Duration{"HOURLY": time.Second, "DAILY": 2 * time.Second}

const (
	// metadataKeep is how long a video's metadata (its ingest job) stays
	// in the archive: the original's 7 days.
	metadataKeep = 1500 * time.Millisecond
	// statsKeep is how long a tracking run stays in the archive; the vault
	// keeps its stats after.
	statsKeep = time.Second
	// backfillRuns are the tracking runs of last week that the old system
	// hands over: enough for the janitor's safety check to have a say
	// (it never refuses a run of 1,000 jobs or fewer for its share).
	backfillRuns = 1100

	videosQueue   = "videos"
	trackingQueue = "tracking"
	backfillQueue = "backfill"
)

// IngestArgs is a video Hunter discovered: the video's metadata.
type IngestArgs struct {
	VideoID string `json:"video_id"`
	Title   string `json:"title"`
	Tier    string `json:"tier"`
}

func (IngestArgs) Kind() string { return "ingest_video" }

// TrackArgs is one tracking run of a watchlist entry; a run imported from
// the old system carries its views.
type TrackArgs struct {
	VideoID string `json:"video_id"`
	Views   int    `json:"views,omitempty"`
}

func (TrackArgs) Kind() string { return "track_video" }

func main() { example.Run("hotqueue", run) }

func run(ctx context.Context, env example.Env) error {
	dir, err := os.MkdirTemp("", "hotqueue-vault-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	v, err := vault.Open(ctx, dir)
	if err != nil {
		return err
	}
	app := newApp()
	client, err := newClient(env, app, v)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer example.Stop(client)

	// Day 0: Hunter discovers three videos; the old system hands over last
	// week's tracking runs.
	if err := discover(ctx, client, IngestArgs{"v1", "Cats", "HOURLY"}, IngestArgs{"v2", "Dogs", "HOURLY"},
		IngestArgs{"v3", "Lakes", "DAILY"}); err != nil {
		return err
	}
	if err := backfill(ctx, client); err != nil {
		return err
	}
	// Day 7: the metadata expired. A new discovery, just before the
	// janitor runs, stays.
	time.Sleep(metadataKeep)
	if err := janitor(ctx, client, IngestArgs{"v4", "Birds", "DAILY"}); err != nil {
		return err
	}
	// Day 8+: ghost tracking goes on for the videos whose metadata went.
	if err := app.waitGhostTracks(ctx, "v1", "v2", "v3"); err != nil {
		return err
	}
	if err := report(ctx, client); err != nil {
		return err
	}
	return readVault(ctx, v)
}

// newClient answers the app's client: its workers, Skiplock's retention
// and the vault it stores finished jobs in.
func newClient(env example.Env, app *app, v *vault.Vault) (*skiplock.Client, error) {
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[IngestArgs](app.ingest))
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[TrackArgs](app.track))
	client, err := skiplock.NewClient(env.Driver, &skiplock.Config{
		Workers: workers, Logger: env.Logger, SchedulerInterval: 100 * time.Millisecond,
		// The backfill queue has no worker here: the importer works it.
		Queues:    map[string]skiplock.QueueConfig{videosQueue: {MaxWorkers: 2}, trackingQueue: {MaxWorkers: 4}},
		Retention: retention(), Vault: v,
	})
	app.client = client
	return client, err
}

// retention is the original's: video metadata for 7 days, tracking runs
// until the vault has them. Its scheduled runs are off: the example runs
// the janitor itself, a dry run first.
func retention() skiplock.Retention {
	return skiplock.Retention{Disabled: true, Floor: statsKeep, Rules: []skiplock.RetentionRule{
		{State: skiplock.StateCompleted, Kind: IngestArgs{}.Kind(), Keep: metadataKeep},
		{State: skiplock.StateCompleted, Kind: TrackArgs{}.Kind(), Keep: statsKeep},
	}}
}

// discover ingests videos and waits until their jobs finished; a video's
// tag finds its metadata.
func discover(ctx context.Context, c *skiplock.Client, videos ...IngestArgs) error {
	for _, v := range videos {
		res, err := c.Insert(ctx, v, &skiplock.InsertOpts{Queue: videosQueue, Tags: []string{videoTag(v.VideoID)}})
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
	}
	return nil
}

// backfill imports the old system's tracking runs: one insert, then an
// importer working the backfill queue as an external worker does, 500
// jobs a round (Client.CompleteAndClaim: the round's reports and its next
// claim in one transaction), each run's stats as its result.
func backfill(ctx context.Context, c *skiplock.Client) error {
	jobs := make([]skiplock.InsertManyParams, backfillRuns)
	for i := range jobs {
		jobs[i] = skiplock.InsertManyParams{Args: TrackArgs{VideoID: fmt.Sprintf("old-%d", i%50), Views: 500 + i},
			Opts: &skiplock.InsertOpts{Queue: backfillQueue}}
	}
	if _, err := c.InsertMany(ctx, jobs); err != nil {
		return err
	}
	var done []skiplock.CompleteManyItem
	imported := 0
	for {
		results, claimed, err := c.CompleteAndClaim(ctx, done, skiplock.ClaimParams{Queue: backfillQueue, WorkerID: "importer", Max: 500})
		if err != nil {
			return err
		}
		for _, r := range results {
			if r.Err != nil {
				return fmt.Errorf("import run %d: %w", r.ID, r.Err)
			}
		}
		imported += len(results)
		if len(claimed) == 0 {
			break
		}
		done = done[:0]
		for _, j := range claimed {
			var run TrackArgs
			if err := json.Unmarshal(j.Payload, &run); err != nil {
				return err
			}
			stats, _ := json.Marshal(Stats{VideoID: run.VideoID, Views: run.Views})
			done = append(done, skiplock.CompleteManyItem{ID: j.ID, Attempt: j.Attempt, Queue: j.Queue, Result: stats})
		}
	}
	example.Say("backfill: %d tracking runs of last week imported from the old system", imported)
	return nil
}

// janitor runs Skiplock's retention as an operator would: a dry run, which
// the safety check refuses (it would delete most of the archive), then the
// run forced, which stores every job in the vault before deleting it. The
// video discovered meanwhile is recent: its metadata stays.
func janitor(ctx context.Context, c *skiplock.Client, discovered IngestArgs) error {
	rep, err := c.JanitorRun(ctx, skiplock.JanitorOptions{DryRun: true})
	if !errors.Is(err, skiplock.ErrJanitorRefused) {
		return fmt.Errorf("dry run: want the safety check to refuse deleting most of the archive, got %v", err)
	}
	example.Say("janitor: dry run: %v", err)
	example.Say("janitor: dry run: %d of %d archived jobs expired (%d videos' metadata)", rep.Run.Jobs, rep.Archived,
		expiredIn(rep, videosQueue))
	if err := discover(ctx, c, discovered); err != nil {
		return err
	}
	rep, err = c.JanitorRun(ctx, skiplock.JanitorOptions{Force: true})
	if err != nil {
		return err
	}
	example.Say("janitor: forced after the dry run: deleted %d finished jobs, %d stored in the vault first; the watchlist is untouched",
		rep.Run.Jobs, rep.Run.Vaulted)
	if rep.Run.Vaulted != rep.Run.Jobs || expiredIn(rep, videosQueue) != 3 {
		return fmt.Errorf("janitor: %d deleted, %d vaulted, %d videos; want every deleted job vaulted, 3 videos",
			rep.Run.Jobs, rep.Run.Vaulted, expiredIn(rep, videosQueue))
	}
	return nil
}

// expiredIn counts a janitor report's jobs of queue.
func expiredIn(rep *skiplock.JanitorReport, queue string) int64 {
	var n int64
	for _, g := range rep.Groups {
		if g.Queue == queue {
			n += g.Jobs
		}
	}
	return n
}

// report shows the watchlist, the metadata left, the hot table and the
// archive, and checks them.
func report(ctx context.Context, c *skiplock.Client) error {
	schedules, err := c.ScheduleList(ctx, nil)
	if err != nil {
		return err
	}
	left, err := c.JobList(ctx, skiplock.JobListParams{Kind: IngestArgs{}.Kind(), Limit: 10})
	if err != nil {
		return err
	}
	var ids []string
	for _, j := range left {
		ids = append(ids, j.Tags...)
	}
	example.Say("watchlist: %d schedules (metadata left for %d video: %v)", len(schedules), len(left), ids)
	for _, s := range schedules {
		example.Say("  %s every %s, next run %s", s.Key, s.Every, s.NextRunAt.Format(time.TimeOnly))
	}
	if len(schedules) != 4 || len(left) != 1 {
		return fmt.Errorf("watchlist: want 4 schedules and the metadata of 1 video, got %d and %d", len(schedules), len(left))
	}
	// The tracking runs that queued up behind the janitor's run (SQLite
	// has one writer) drain first.
	var hot, archived int64
	for wait := time.Now().Add(20 * time.Second); ; {
		if hot, archived, err = tables(ctx, c); err != nil || hot <= 4 || time.Now().After(wait) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	example.Say("hot table: %d live jobs (at most the current tracking runs); archive: %d completed jobs", hot, archived)
	if hot > 4 || archived > backfillRuns/2 {
		return fmt.Errorf("want at most one live track job per video and the archive emptied by retention, got %d live, %d archived", hot, archived)
	}
	return nil
}

// tables counts the jobs of the hot table and the completed jobs of the
// archive.
func tables(ctx context.Context, c *skiplock.Client) (hot, archived int64, err error) {
	live, err := c.QueueList(ctx, false)
	if err != nil {
		return 0, 0, err
	}
	all, err := c.QueueList(ctx, true)
	if err != nil {
		return 0, 0, err
	}
	for _, q := range live {
		for _, n := range q.Counts {
			hot += n
		}
	}
	for _, q := range all {
		archived += q.Counts[skiplock.StateCompleted]
	}
	return hot, archived, nil
}

// readVault reads the vault's Parquet files back: the metadata of the
// videos that expired, the tracking runs' stats and the hourly metrics.
func readVault(ctx context.Context, v *vault.Vault) error {
	var videos []string
	err := v.Query(ctx, vault.QueryParams{Kind: IngestArgs{}.Kind()}, func(j *skiplock.JobRow) error {
		var a IngestArgs
		if err := json.Unmarshal(j.Payload, &a); err != nil {
			return err
		}
		videos = append(videos, fmt.Sprintf("%s %q", a.VideoID, a.Title))
		return nil
	})
	if err != nil {
		return err
	}
	example.Say("vault: the metadata of %d videos the archive let go: %v", len(videos), videos)
	runs := 0
	var last Stats
	err = v.Query(ctx, vault.QueryParams{Kind: TrackArgs{}.Kind()}, func(j *skiplock.JobRow) error {
		runs++
		return json.Unmarshal(j.Result, &last)
	})
	if err != nil {
		return err
	}
	example.Say("vault: %d tracking runs' stats, the last: video %s, %d views", runs, last.VideoID, last.Views)
	metrics, err := v.Metrics(ctx, time.Time{}, time.Time{})
	if err != nil {
		return err
	}
	byQueue, queues := sumByQueue(metrics)
	for _, name := range queues {
		example.Say("vault metrics: queue %s: %d jobs, %d completed", name, byQueue[name].Jobs, byQueue[name].Completed)
	}
	if len(videos) != 3 || runs < backfillRuns || byQueue[backfillQueue] == nil || byQueue[backfillQueue].Completed != backfillRuns {
		return fmt.Errorf("vault: want 3 videos, at least %d tracking runs and their metrics, got %d videos, %d runs, %d metrics rows",
			backfillRuns, len(videos), runs, len(metrics))
	}
	return nil
}

// sumByQueue sums hourly metrics by queue, and answers the queues in order.
func sumByQueue(metrics []vault.HourMetrics) (map[string]*vault.HourMetrics, []string) {
	byQueue := map[string]*vault.HourMetrics{}
	var queues []string
	for _, m := range metrics {
		q := byQueue[m.Queue]
		if q == nil {
			q = &vault.HourMetrics{Queue: m.Queue}
			byQueue[m.Queue] = q
			queues = append(queues, m.Queue)
		}
		q.Jobs += m.Jobs
		q.Completed += m.Completed
	}
	slices.Sort(queues)
	return byQueue, queues
}
