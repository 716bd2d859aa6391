package skiplock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
)

// openSQLite opens a migrated SQLite database in a temporary directory; a
// program would open "skiplock.db" or pgdriver.Connect(ctx, url).
func openSQLite() (*sqlitedriver.Driver, func()) {
	dir, err := os.MkdirTemp("", "skiplock-example-")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	drv, err := sqlitedriver.Open(ctx, filepath.Join(dir, "skiplock.db"))
	if err != nil {
		panic(err)
	}
	if _, err := drv.Migrator().Up(ctx, 0); err != nil {
		panic(err)
	}
	return drv, func() { _ = drv.Close(); _ = os.RemoveAll(dir) }
}

// EmailArgs is the payload of an "email" job.
type EmailArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

func (EmailArgs) Kind() string { return "email" }

// Insert a job with options, and again with the same idempotency key.
func ExampleClient_Insert() {
	drv, cleanup := openSQLite()
	defer cleanup()
	ctx := context.Background()
	client, err := skiplock.NewClient(drv, nil) // insert-only: no queues
	if err != nil {
		panic(err)
	}
	opts := &skiplock.InsertOpts{Queue: "mail", Priority: skiplock.Int(8), Delay: time.Hour,
		IdempotencyKey: "welcome:ada"}
	first, err := client.Insert(ctx, EmailArgs{To: "ada@example.com", Subject: "Welcome"}, opts)
	if err != nil {
		panic(err)
	}
	again, err := client.Insert(ctx, EmailArgs{To: "ada@example.com", Subject: "Welcome"}, opts)
	if err != nil {
		panic(err)
	}
	fmt.Println(first.Job.Kind, first.Job.Queue, first.Job.Priority, first.Job.State)
	fmt.Println("duplicate:", again.Duplicate, "same job:", again.Job.ID == first.Job.ID)

	_, err = client.Insert(ctx, EmailArgs{}, &skiplock.InsertOpts{Priority: skiplock.Int(42)})
	var ve *skiplock.ValidationError
	fmt.Println(errors.As(err, &ve), ve.Field)
	// Output:
	// email mail 8 scheduled
	// duplicate: true same job: true
	// true priority
}

// Work jobs with a typed worker; Stop drains the running ones.
func ExampleAddWorker() {
	drv, cleanup := openSQLite()
	defer cleanup()
	ctx := context.Background()
	done := make(chan string)
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[EmailArgs](func(ctx context.Context, job *skiplock.Job[EmailArgs]) error {
		done <- fmt.Sprintf("sent %q to %s (attempt %d)", job.Args.Subject, job.Args.To, job.Attempt)
		return job.SetResult(map[string]string{"status": "sent"})
	}))
	client, err := skiplock.NewClient(drv, &skiplock.Config{
		Queues:  map[string]skiplock.QueueConfig{"default": {MaxWorkers: 10}},
		Workers: workers,
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	res, err := client.Insert(ctx, EmailArgs{To: "ada@example.com", Subject: "Hello"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(<-done)
	if err := client.Stop(ctx); err != nil { // flushes the completion
		panic(err)
	}
	job, _ := client.JobGet(ctx, res.Job.ID)
	fmt.Println(job.State, string(job.Result))
	// Output:
	// sent "Hello" to ada@example.com (attempt 1)
	// completed {"status":"sent"}
}

// An error retries with backoff; Permanent fails at once; every attempt's
// error stays on the job.
func ExampleWorkerOpts_retry() {
	drv, cleanup := openSQLite()
	defer cleanup()
	ctx := context.Background()
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[EmailArgs](func(ctx context.Context, job *skiplock.Job[EmailArgs]) error {
		if job.Attempt < 3 {
			return fmt.Errorf("smtp timeout on attempt %d", job.Attempt)
		}
		return skiplock.Permanent(errors.New("mailbox does not exist"))
	}), skiplock.WorkerOpts{Backoff: func(retry int) time.Duration { return 10 * time.Millisecond }})
	client, err := skiplock.NewClient(drv, &skiplock.Config{
		Queues: map[string]skiplock.QueueConfig{"default": {}}, Workers: workers,
		SchedulerInterval: 20 * time.Millisecond, // promote retries quickly in this example
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx)
	res, _ := client.Insert(ctx, EmailArgs{To: "nobody@example.com"}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(5)})
	job := res.Job
	for job.State != skiplock.StateFailed {
		time.Sleep(20 * time.Millisecond)
		job, _ = client.JobGet(ctx, res.Job.ID)
	}
	for _, e := range job.Errors {
		fmt.Printf("attempt %d: %s (retryable %v)\n", e.Attempt, e.Message, e.Retryable)
	}
	// Output:
	// attempt 1: smtp timeout on attempt 1 (retryable true)
	// attempt 2: smtp timeout on attempt 2 (retryable true)
	// attempt 3: permanent: mailbox does not exist (retryable false)
}

// Insert inside your own transaction: if it rolls back, there is no job.
func ExampleClient_InsertTx() {
	drv, cleanup := openSQLite()
	defer cleanup()
	ctx := context.Background()
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		panic(err)
	}
	// On PostgreSQL the transaction is a pgx.Tx from your pool.
	tx, err := drv.DB().BeginTx(ctx, nil)
	if err != nil {
		panic(err)
	}
	res, err := client.InsertTx(ctx, tx, EmailArgs{To: "ada@example.com"}, nil)
	if err != nil {
		panic(err)
	}
	_ = tx.Rollback()
	_, err = client.JobGet(ctx, res.Job.ID)
	fmt.Println("after rollback:", err)

	tx, _ = drv.DB().BeginTx(ctx, nil)
	res, _ = client.InsertTx(ctx, tx, EmailArgs{To: "ada@example.com"}, nil)
	_ = tx.Commit()
	job, _ := client.JobGet(ctx, res.Job.ID)
	fmt.Println("after commit:", job.State)
	// Output:
	// after rollback: not found
	// after commit: pending
}
