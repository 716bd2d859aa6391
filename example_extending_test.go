package skiplock_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/skiplocksql"
)

// Work middleware wraps every attempt: here it logs each job with its
// outcome. Insert middleware sees each job before it is stored: here it
// stamps the caller's request id into the metadata and refuses a queue.
func ExampleWorkMiddleware() {
	drv, cleanup := openSQLite()
	defer cleanup()
	ctx := context.Background()

	logAttempt := func(ctx context.Context, job *skiplock.JobRow, next func(context.Context) error) error {
		err := next(ctx)
		fmt.Printf("attempt %d of %s job: error %v\n", job.Attempt, job.Kind, err)
		return err
	}
	stampRequest := func(ctx context.Context, jobs []*skiplock.InsertJob, next func(context.Context) error) error {
		for _, j := range jobs {
			if j.Queue == "closed" {
				return fmt.Errorf("queue %q takes no jobs", j.Queue)
			}
			if err := j.SetMetadata("request_id", "req-42"); err != nil {
				return err
			}
		}
		return next(ctx)
	}
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[EmailArgs](func(ctx context.Context, job *skiplock.Job[EmailArgs]) error {
		var req string
		_, _ = skiplock.MetadataValue(job.JobRow, "request_id", &req)
		fmt.Println("sending to", job.Args.To, "for", req)
		return nil
	}))
	client, err := skiplock.NewClient(drv, &skiplock.Config{
		Queues:           map[string]skiplock.QueueConfig{"default": {}},
		Workers:          workers,
		WorkMiddleware:   []skiplock.WorkMiddleware{logAttempt},
		InsertMiddleware: []skiplock.InsertMiddleware{stampRequest},
	})
	if err != nil {
		panic(err)
	}
	if _, err := client.Insert(ctx, EmailArgs{To: "ada@example.com"}, nil); err != nil {
		panic(err)
	}
	_, err = client.Insert(ctx, EmailArgs{To: "bob@example.com"}, &skiplock.InsertOpts{Queue: "closed"})
	fmt.Println("refused:", err)
	if _, err := client.Drain(ctx); err != nil { // a started client works them itself
		panic(err)
	}
	// Output:
	// refused: queue "closed" takes no jobs
	// sending to ada@example.com for req-42
	// attempt 1 of email job: error <nil>
}

// An error handler sees every failed attempt, panics included, e.g. to
// report them to an error tracker.
func ExampleConfig_errorHandler() {
	drv, cleanup := openSQLite()
	defer cleanup()
	ctx := context.Background()
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[EmailArgs](func(ctx context.Context, job *skiplock.Job[EmailArgs]) error {
		if job.Args.To == "" {
			panic("no address")
		}
		return errors.New("mail server down")
	}))
	client, err := skiplock.NewClient(drv, &skiplock.Config{
		Queues:  map[string]skiplock.QueueConfig{"default": {}},
		Workers: workers,
		ErrorHandler: func(ctx context.Context, job *skiplock.JobRow, err error) {
			var pe *skiplock.PanicError
			if errors.As(err, &pe) {
				fmt.Printf("job %s attempt %d panicked: %v (stack kept: %t)\n", job.Kind, job.Attempt, pe.Value, pe.Stack != "")
				return
			}
			fmt.Printf("job %s attempt %d failed: %v, now %s\n", job.Kind, job.Attempt, err, job.State)
		},
	})
	if err != nil {
		panic(err)
	}
	_, _ = client.Insert(ctx, EmailArgs{To: "ada@example.com"}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(0)})
	_, _ = client.Drain(ctx)
	_, _ = client.Insert(ctx, EmailArgs{}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(0)})
	_, _ = client.Drain(ctx)
	// Output:
	// job email attempt 1 failed: mail server down, now failed
	// job email attempt 1 panicked: no address (stack kept: true)
}

// Subscribe delivers what happens to the jobs a client works, without ever
// holding up its workers.
func ExampleClient_Subscribe() {
	drv, cleanup := openSQLite()
	defer cleanup()
	ctx := context.Background()
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[EmailArgs](func(ctx context.Context, job *skiplock.Job[EmailArgs]) error {
		if job.Args.To == "" {
			return skiplock.Permanent(errors.New("no address"))
		}
		return nil
	}))
	client, err := skiplock.NewClient(drv, &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {}},
		Workers: workers, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		panic(err)
	}
	events, cancel := client.Subscribe(skiplock.EventJobCompleted, skiplock.EventJobFailed)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx)
	_, _ = client.Insert(ctx, EmailArgs{To: "ada@example.com"}, nil)
	_, _ = client.Insert(ctx, EmailArgs{}, nil)
	seen := map[skiplock.EventKind]int{}
	for len(seen) < 2 {
		select {
		case e := <-events:
			seen[e.Kind]++
		case <-time.After(30 * time.Second):
			panic("no event")
		}
	}
	fmt.Println(seen[skiplock.EventJobCompleted], "completed,", seen[skiplock.EventJobFailed], "failed")
	// Output:
	// 1 completed, 1 failed
}

// InsertTx from skiplocksql (SQLite) and skiplockpgx (PostgreSQL) checks
// the transaction's type when the program compiles.
func ExampleClient_InsertTx_typed() {
	drv, cleanup := openSQLite()
	defer cleanup()
	ctx := context.Background()
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		panic(err)
	}
	tx, err := drv.DB().BeginTx(ctx, nil)
	if err != nil {
		panic(err)
	}
	res, err := skiplocksql.InsertTx(ctx, client, tx, EmailArgs{To: "ada@example.com"}, nil)
	if err != nil {
		panic(err)
	}
	_ = tx.Rollback() // the job goes with the transaction
	_, err = client.JobGet(ctx, res.Job.ID)
	fmt.Println(errors.Is(err, skiplock.ErrNotFound))
	// Output:
	// true
}
