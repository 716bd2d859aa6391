package skiplock_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// lockedBuffer is a log sink the test reads while the client writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestClientThroughPgBouncer: a client works jobs through PgBouncer in
// transaction mode. With a listen URL a job inserted by another process
// wakes it at once (its poll is minutes away); without one it says once,
// at start, that it polls, and works the job at its next poll.
func TestClientThroughPgBouncer(t *testing.T) {
	t.Parallel()
	drv, pooled := pgtest.PooledSchema(t, pgdriver.Options{})
	bare, err := pgdriver.Open(t.Context(), pooled, pgdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bare.Close)
	for _, c := range []struct {
		name   string
		driver *pgdriver.Driver
		poll   time.Duration
	}{{"listen URL", drv, 10 * time.Minute}, {"no listen URL", bare, 50 * time.Millisecond}} {
		var log lockedBuffer
		ran := make(chan int64, 1)
		ws := skiplock.NewWorkers()
		skiplock.MustAddWorker(ws, skiplock.WorkFunc[sleepArgs](func(_ context.Context, j *skiplock.Job[sleepArgs]) error {
			ran <- j.ID
			return nil
		}))
		worker, err := skiplock.NewClient(c.driver, &skiplock.Config{Workers: ws, Logger: slog.New(slog.NewTextHandler(&log, nil)),
			Queues: map[string]skiplock.QueueConfig{"default": {}}, FetchPollInterval: c.poll})
		if err != nil {
			t.Fatal(err)
		}
		if err := worker.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		producer, err := skiplock.NewClient(pgtest.Open(t, pgtest.PgBouncerDirectURL()+"&search_path="+schemaOf(t, drv)), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := producer.Insert(t.Context(), sleepArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-ran:
			if id != res.Job.ID {
				t.Errorf("%s: ran job %d, want %d", c.name, id, res.Job.ID)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s: the job did not run", c.name)
		}
		if err := worker.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		polls := strings.Count(log.String(), `msg="no LISTEN: workers poll for new jobs"`)
		if want := map[bool]int{true: 1, false: 0}[c.driver == bare]; polls != want {
			t.Errorf("%s: the log says %d times that the client polls, want %d:\n%s", c.name, polls, want, log.String())
		}
	}
}

// schemaOf answers the schema a driver's sessions start in.
func schemaOf(t *testing.T, d *pgdriver.Driver) string {
	t.Helper()
	var s string
	if err := d.Pool().QueryRow(t.Context(), `SELECT current_schema()`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}
