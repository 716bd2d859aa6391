package skiplock_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// exampleDriver opens a driver on a fresh schema of the test database; a
// program would call pgdriver.Connect(ctx, os.Getenv("DATABASE_URL")).
func exampleDriver() (*pgdriver.Driver, func()) {
	ctx := context.Background()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "skiplock_example_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, pgtest.URL())
	if err != nil {
		panic(err)
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		panic(err)
	}
	drv, err := pgdriver.Connect(ctx, pgtest.WithSearchPath(pgtest.URL(), schema))
	if err != nil {
		panic(err)
	}
	if _, err := drv.Migrator().Up(ctx, 0); err != nil {
		panic(err)
	}
	return drv, func() {
		drv.Close()
		_, _ = admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		_ = admin.Close(ctx)
	}
}

// waitWorkflow polls a workflow until it is no longer running.
func waitWorkflow(ctx context.Context, c *skiplock.Client, id string) *skiplock.WorkflowView {
	for {
		v, err := c.Workflow(ctx, id)
		if err == nil && v.Status != skiplock.WorkflowRunning {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// VideoStep is one step of a video pipeline: scrape → enrich → publish.
type VideoStep struct {
	VideoID string `json:"video_id"`
	Step    string `json:"step"`
}

func (VideoStep) Kind() string { return "video_step" }

// A pipeline: each stage's worker enqueues the next stage with Job.Next, in
// the transaction that completes it.
func Example_workflowPipeline() {
	drv, done := exampleDriver()
	defer done()
	ctx := context.Background()

	next := map[string]string{"scrape": "enrich", "enrich": "publish"}
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[VideoStep](func(ctx context.Context, j *skiplock.Job[VideoStep]) error {
		// … the work of j.Args.Step …
		if n, ok := next[j.Args.Step]; ok {
			j.Next(VideoStep{VideoID: j.Args.VideoID, Step: n}, &skiplock.InsertOpts{Stage: n})
		}
		return nil
	}))
	client, err := skiplock.NewClient(drv, &skiplock.Config{Workers: workers,
		Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 10}}})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx)

	_, err = client.Insert(ctx, VideoStep{VideoID: "v42", Step: "scrape"},
		&skiplock.InsertOpts{WorkflowID: "video:v42", Stage: "scrape"})
	if err != nil {
		panic(err)
	}
	v := waitWorkflow(ctx, client, "video:v42")
	fmt.Println("workflow", v.ID, v.Status)
	for _, s := range v.Stages {
		fmt.Println(s.Name, s.State)
	}
	// Output:
	// workflow video:v42 completed
	// scrape completed
	// enrich completed
	// publish completed
}

// Dependencies: a job waits for its parents; a failed or cancelled parent
// cancels it, with a reason naming the parent.
func Example_workflowDependencies() {
	drv, done := exampleDriver()
	defer done()
	ctx := context.Background()
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		panic(err)
	}
	a, _ := client.Insert(ctx, VideoStep{VideoID: "a", Step: "scrape"}, nil)
	b, _ := client.Insert(ctx, VideoStep{VideoID: "b", Step: "scrape"}, nil)
	join, _ := client.Insert(ctx, VideoStep{Step: "merge"},
		&skiplock.InsertOpts{DependsOn: []int64{a.Job.ID, b.Job.ID}})
	fmt.Println("merge:", join.Job.State)

	if _, err := client.JobCancel(ctx, a.Job.ID); err != nil {
		panic(err)
	}
	j, _ := client.JobGet(ctx, join.Job.ID)
	fmt.Println("merge:", j.State, "–", strings.Contains(j.Errors[0].Message, "cancelled"))

	_, err = client.Insert(ctx, VideoStep{}, &skiplock.InsertOpts{DependsOn: []int64{999999}})
	fmt.Println(errors.Is(err, skiplock.ErrMissingDependency))
	// Output:
	// merge: waiting
	// merge: cancelled – true
	// true
}

// Cancel: the running worker's context is cancelled with ErrCancelled and
// the job ends cancelled.
func Example_workflowCancel() {
	drv, done := exampleDriver()
	defer done()
	ctx := context.Background()
	started := make(chan int64, 1)
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[VideoStep](func(ctx context.Context, j *skiplock.Job[VideoStep]) error {
		started <- j.ID
		<-ctx.Done()
		fmt.Println("worker stopped:", context.Cause(ctx))
		return ctx.Err()
	}))
	client, err := skiplock.NewClient(drv, &skiplock.Config{Workers: workers,
		Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 1}}})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx)
	if _, err := client.Insert(ctx, VideoStep{Step: "transcode"}, nil); err != nil {
		panic(err)
	}
	id := <-started
	if _, err := client.JobCancel(ctx, id); err != nil {
		panic(err)
	}
	for {
		j, _ := client.JobGet(ctx, id)
		if j.State.Finished() {
			fmt.Println("job:", j.State)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Output:
	// worker stopped: job cancelled by request
	// job: cancelled
}

// Periodic jobs are declared in the Config; a bad one is refused with an
// error naming the field.
func ExampleParsePeriodic() {
	nightly, err := skiplock.ParsePeriodic("nightly-report", "0 2 * * *", "report", []byte(`{"scope":"all"}`))
	fmt.Println(nightly.Name, err)

	_, err = skiplock.NewClient(&nilDriver{}, &skiplock.Config{PeriodicJobs: []skiplock.PeriodicJob{
		nightly,
		{Name: "sync", Schedule: "every 5 minutes", Kind: "sync"},
	}})
	fmt.Println(err)
	// Output:
	// nightly-report <nil>
	// config: PeriodicJobs[1].Schedule: "every 5 minutes": expected exactly 5 fields, found 3: [every 5 minutes]
}

// Recurring per-entity schedules (a watchlist): the leader enqueues a job
// of each schedule every Every; schedules outlive their jobs.
func ExampleClient_ScheduleUpsert() {
	drv, done := exampleDriver()
	defer done()
	ctx := context.Background()
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		panic(err)
	}
	s, err := client.ScheduleUpsert(ctx, &skiplock.Schedule{Key: "video:v42", Kind: "track_video",
		Payload: []byte(`{"video_id":"v42"}`), Every: 6 * time.Hour})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Key, s.Kind, s.Queue, s.Every)
	// Output:
	// video:v42 track_video default 6h0m0s
}
