// Command pgmq rebuilds PGMQ queues on Skiplock: a scrape → enrich
// pipeline where a visibility timeout is a lease per kind, a crashed
// worker's message reappears, a poison pill fails after three reads, and
// finished jobs live in the archive.
//
//	go run ./examples/pgmq [--database-url postgres://…] [-v]
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/examples/internal/example"
)

// The original's two queues and their visibility timeouts.
const (
	scrapeQueue = "scrape_jobs"
	enrichQueue = "enrich_jobs"
	scrapeVT    = 120 * time.Second // ScrapeCreators API calls
	enrichVT    = 300 * time.Second // two OpenAI calls
)

// ScrapeArgs is a message of scrape_jobs: fetch a video's transcript.
type ScrapeArgs struct {
	VideoID  string `json:"video_id"`
	VideoURL string `json:"video_url"`
}

func (ScrapeArgs) Kind() string { return "scrape" }

// EnrichArgs is a message of enrich_jobs.
type EnrichArgs struct {
	VideoID    string `json:"video_id"`
	Transcript string `json:"transcript"`
}

func (EnrichArgs) Kind() string { return "enrich" }

func main() { example.Run("pgmq", run) }

func run(ctx context.Context, env example.Env) error {
	workers := skiplock.NewWorkers()
	quickRetry := func(int) time.Duration { return 100 * time.Millisecond }
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[ScrapeArgs](scrape),
		skiplock.WorkerOpts{Lease: scrapeVT, Backoff: quickRetry})
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[EnrichArgs](enrich), skiplock.WorkerOpts{Lease: enrichVT})
	client, err := skiplock.NewClient(env.Driver, &skiplock.Config{
		Workers: workers, Logger: env.Logger, RescueInterval: 200 * time.Millisecond,
		Queues: map[string]skiplock.QueueConfig{scrapeQueue: {MaxWorkers: 2}, enrichQueue: {MaxWorkers: 2}},
	})
	if err != nil {
		return err
	}

	// A worker reads a message with a 1 s visibility timeout and crashes:
	// it never reports, so once its lease expires the message reappears.
	crashed, err := send(ctx, client, "v1", "https://videos.example/v1", nil)
	if err != nil {
		return err
	}
	held, err := client.Claim(ctx, skiplock.ClaimParams{Queue: scrapeQueue, WorkerID: "scrape-worker-crashed",
		Max: 1, Lease: time.Second})
	if err != nil || len(held) != 1 {
		return fmt.Errorf("crashing worker claims: %v (%d jobs)", err, len(held))
	}
	example.Say("scrape-worker-crashed: read job %d (video v1) with a 1s visibility timeout, then crashed", held[0].ID)

	if _, err := send(ctx, client, "v2", "https://videos.example/v2", nil); err != nil {
		return err
	}
	if _, err := send(ctx, client, "v3", "https://videos.example/v3-no-transcript", nil); err != nil {
		return err
	}
	// Poison pill: read at most 3 times (the original's read_ct > 3), then failed.
	poison, err := send(ctx, client, "v4", "https://videos.example/broken", skiplock.Int(2))
	if err != nil {
		return err
	}

	if err := client.Start(ctx); err != nil {
		return err
	}
	defer example.Stop(client)
	for _, v := range []string{"v1", "v2", "v3", "v4"} {
		view, err := example.WaitWorkflow(ctx, client, "video:"+v)
		if err != nil {
			return err
		}
		example.Say("video %s: %s", v, view.Status)
	}
	return check(ctx, client, crashed, poison)
}

// send is the original's ingest-router: pgmq.send('scrape_jobs', …).
func send(ctx context.Context, c *skiplock.Client, id, url string, maxRetries *int) (int64, error) {
	res, err := c.Insert(ctx, ScrapeArgs{VideoID: id, VideoURL: url}, &skiplock.InsertOpts{
		Queue: scrapeQueue, MaxRetries: maxRetries, WorkflowID: "video:" + id, Stage: "scraping"})
	if err != nil {
		return 0, err
	}
	example.Say("ingest-router: sent job %d to %s (video %s)", res.Job.ID, scrapeQueue, id)
	return res.Job.ID, nil
}

func scrape(ctx context.Context, j *skiplock.Job[ScrapeArgs]) error {
	vt := time.Until(*j.LeaseUntil).Round(time.Second)
	example.Say("scrape-worker: job %d video %s, read %d, invisible for %s", j.ID, j.Args.VideoID, j.Attempt, vt)
	if strings.Contains(j.Args.VideoURL, "broken") {
		return fmt.Errorf("ScrapeCreators API: 502 for %s", j.Args.VideoURL)
	}
	transcript := "a transcript of " + j.Args.VideoID
	if strings.Contains(j.Args.VideoURL, "no-transcript") {
		transcript = ""
	}
	// pgmq.send('enrich_jobs') in the same transaction as the archive.
	j.Next(EnrichArgs{VideoID: j.Args.VideoID, Transcript: transcript},
		&skiplock.InsertOpts{Queue: enrichQueue, Stage: "enriching"})
	return nil
}

func enrich(ctx context.Context, j *skiplock.Job[EnrichArgs]) error {
	vt := time.Until(*j.LeaseUntil).Round(time.Second)
	if j.Args.Transcript == "" {
		example.Say("enrich-worker: job %d video %s, invisible for %s: no transcript, partial update", j.ID, j.Args.VideoID, vt)
		return j.SetResult(map[string]any{"status": "done", "enriched": false})
	}
	example.Say("enrich-worker: job %d video %s, invisible for %s: enriched + embedded", j.ID, j.Args.VideoID, vt)
	return j.SetResult(map[string]any{"status": "done", "enriched": true})
}
