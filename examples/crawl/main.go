// Command crawl rebuilds queue-based crawling on Skiplock: crawl jobs
// claimed by priority, reporting progress 0–100 and a page-token
// checkpoint, a stale worker's job rescued by the reaper and resumed from
// its checkpoint, and a crawl cancelled while it runs.
//
//	go run ./examples/crawl [--database-url postgres://…] [-v]
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/examples/internal/example"
)

// staleAfter is the original's reaper threshold: no heartbeat for 2 minutes.
// The client heartbeats running jobs every third of it.
const staleAfter = 2 * time.Minute

// CrawlArgs is a crawl request (the original's crawl_jobs.payload).
type CrawlArgs struct {
	URL       string `json:"url"`
	Pages     int    `json:"pages"`
	PageDelay int    `json:"page_delay_ms"`
}

func (CrawlArgs) Kind() string { return "crawl" }

// Cursor is the checkpoint: where the crawl is, so that a new attempt
// resumes there.
type Cursor struct {
	Page      int    `json:"page"`
	PageToken string `json:"page_token"`
}

// crawler is the worker; it remembers the order crawls started in.
type crawler struct {
	mu      sync.Mutex
	started []string
	resumed map[int64]string // job id → page token it resumed at
}

func (c *crawler) Work(ctx context.Context, j *skiplock.Job[CrawlArgs]) error {
	c.mu.Lock()
	c.started = append(c.started, j.Args.URL)
	c.mu.Unlock()
	var at Cursor
	if ok, err := j.LoadCheckpoint(&at); err != nil {
		return err
	} else if ok {
		c.mu.Lock()
		c.resumed[j.ID] = at.PageToken
		c.mu.Unlock()
		example.Say("worker: job %d %s, attempt %d, resuming at page token %q", j.ID, j.Args.URL, j.Attempt, at.PageToken)
	} else {
		example.Say("worker: job %d %s (priority %d), attempt %d, from the start", j.ID, j.Args.URL, j.Priority, j.Attempt)
	}
	for at.Page < j.Args.Pages {
		if err := crawlPage(ctx, j, &at); err != nil {
			if ctx.Err() != nil { // cancelled: while waiting for a page or saving it
				example.Say("worker: job %d stopped at page %d: %v", j.ID, at.Page, context.Cause(ctx))
				return ctx.Err()
			}
			return err
		}
	}
	return j.SetResult(map[string]int{"pages": at.Page})
}

// crawlPage fetches the page after at, then saves where the crawl is and
// how far.
func crawlPage(ctx context.Context, j *skiplock.Job[CrawlArgs], at *Cursor) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(j.Args.PageDelay) * time.Millisecond):
	}
	next := Cursor{Page: at.Page + 1, PageToken: fmt.Sprintf("page-%d", at.Page+1)}
	if err := j.SaveCheckpoint(ctx, next); err != nil {
		return err
	}
	*at = next
	pct := at.Page * 100 / j.Args.Pages
	return j.Progress(ctx, pct, fmt.Sprintf("page %d of %d", at.Page, j.Args.Pages))
}

func main() { example.Run("crawl", run) }

func run(ctx context.Context, env example.Env) error {
	w := &crawler{resumed: map[int64]string{}}
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker[CrawlArgs](workers, w, skiplock.WorkerOpts{Lease: staleAfter})
	client, err := skiplock.NewClient(env.Driver, &skiplock.Config{
		Workers: workers, Logger: env.Logger, RescueInterval: 200 * time.Millisecond,
		Queues: map[string]skiplock.QueueConfig{"crawl": {MaxWorkers: 1}},
	})
	if err != nil {
		return err
	}
	stale, err := staleWorker(ctx, client)
	if err != nil {
		return err
	}
	// POST /knowledge-items/crawl, three times: higher priority first.
	ids := map[string]int64{}
	for _, r := range []struct {
		url      string
		priority int
	}{{"bulk.example", 0}, {"normal.example", 5}, {"user-waiting.example", 10}} {
		res, err := client.Insert(ctx, CrawlArgs{URL: r.url, Pages: 3, PageDelay: 10},
			&skiplock.InsertOpts{Queue: "crawl", Priority: skiplock.Int(r.priority)})
		if err != nil {
			return err
		}
		ids[r.url] = res.Job.ID
		example.Say("api: enqueued job %d %s priority %d", res.Job.ID, r.url, r.priority)
	}

	if err := client.Start(ctx); err != nil {
		return err
	}
	defer example.Stop(client)
	for _, id := range ids {
		if _, err := example.WaitFinished(ctx, client, id); err != nil {
			return err
		}
	}
	if err := checkPriorities(w); err != nil {
		return err
	}
	if err := checkRescued(ctx, client, w, stale); err != nil {
		return err
	}
	return cancelRunning(ctx, client)
}

// staleWorker plays a worker that claims a crawl with a 1 s lease, reports
// 50% and a checkpoint, and then dies: no more heartbeats.
func staleWorker(ctx context.Context, c *skiplock.Client) (int64, error) {
	res, err := c.Insert(ctx, CrawlArgs{URL: "docs.example", Pages: 6, PageDelay: 10}, &skiplock.InsertOpts{Queue: "crawl"})
	if err != nil {
		return 0, err
	}
	held, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "crawl", WorkerID: "crawler-7", Max: 1, Lease: time.Second})
	if err != nil || len(held) != 1 {
		return 0, fmt.Errorf("crawler-7 claims: %v (%d jobs)", err, len(held))
	}
	pct, msg := 50, "page 3 of 6"
	_, err = c.Heartbeat(ctx, res.Job.ID, skiplock.HeartbeatParams{WorkerID: "crawler-7", Lease: time.Second,
		Progress: &pct, ProgressMessage: &msg, Checkpoint: []byte(`{"page":3,"page_token":"page-3"}`)})
	if err != nil {
		return 0, fmt.Errorf("crawler-7 heartbeat: %w", err)
	}
	example.Say("crawler-7: claimed job %d docs.example, heartbeat at 50%% with page token \"page-3\", then died", res.Job.ID)
	return res.Job.ID, nil
}

func checkPriorities(w *crawler) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var order []string
	for _, u := range w.started {
		if u != "docs.example" { // the rescued crawl may come in between
			order = append(order, u)
		}
	}
	example.Say("claim order: %v", order)
	if fmt.Sprint(order) != "[user-waiting.example normal.example bulk.example]" {
		return errors.New("crawls did not start highest priority first")
	}
	example.Say("priorities: highest first: ok")
	return nil
}

func checkRescued(ctx context.Context, c *skiplock.Client, w *crawler, id int64) error {
	j, err := example.WaitFinished(ctx, c, id)
	if err != nil {
		return err
	}
	example.Say("job %d docs.example: %s on attempt %d, progress %d%%, checkpoint %s, result %s",
		j.ID, j.State, j.Attempt, j.Progress, j.Checkpoint, j.Result)
	for _, e := range j.Errors {
		example.Say("  attempt %d: %s (%s)", e.Attempt, e.Message, e.Type)
	}
	if j.State != skiplock.StateCompleted || j.Attempt != 2 || len(j.Errors) != 1 || j.Errors[0].Type != "lease_expired" {
		return fmt.Errorf("stale job: want completed on attempt 2 after lease_expired, got %s on attempt %d", j.State, j.Attempt)
	}
	w.mu.Lock()
	token := w.resumed[id]
	w.mu.Unlock()
	if token != "page-3" {
		return fmt.Errorf("stale job: want the new attempt to resume at page-3, got %q", token)
	}
	example.Say("reaper: stale worker's job requeued and resumed from its checkpoint: ok")
	return nil
}

// cancelRunning cancels a long crawl once it is 20% through.
func cancelRunning(ctx context.Context, c *skiplock.Client) error {
	res, err := c.Insert(ctx, CrawlArgs{URL: "huge.example", Pages: 100, PageDelay: 50}, &skiplock.InsertOpts{Queue: "crawl"})
	if err != nil {
		return err
	}
	j, err := example.WaitJob(ctx, c, res.Job.ID, func(j *skiplock.JobRow) bool { return j.Progress >= 20 })
	if err != nil {
		return err
	}
	example.Say("api: job %d huge.example is %s at %d%% (%s): cancel it", j.ID, j.State, j.Progress, j.ProgressMessage)
	if _, err := c.JobCancel(ctx, j.ID); err != nil {
		return err
	}
	if j, err = example.WaitFinished(ctx, c, j.ID); err != nil {
		return err
	}
	example.Say("job %d huge.example: %s at %d%%", j.ID, j.State, j.Progress)
	if j.State != skiplock.StateCancelled || j.Progress >= 100 {
		return fmt.Errorf("cancelled crawl: want cancelled before the end, got %s at %d%%", j.State, j.Progress)
	}
	example.Say("cancel: the running crawl stopped mid-run: ok")
	return nil
}
