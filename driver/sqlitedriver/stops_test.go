package sqlitedriver_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// stopChildEnv switches the test binary into a process that runs "hold" jobs.
const stopChildEnv = "SKIPLOCK_SQLITE_STOP_CHILD_DB"

type holdArgs struct{}

func (holdArgs) Kind() string { return "hold" }

// TestStopRequestsCrossProcesses: a cancel and a pause asked in this process
// reach jobs running in another process on the same file, whose heartbeat
// is an hour away: it looks for requests every second.
func TestStopRequestsCrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	d := sqlitetest.Open(t, path)
	ctx := t.Context()
	if _, err := d.DB().ExecContext(ctx, `CREATE TABLE test_causes (job_id INTEGER NOT NULL, cause TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	c, err := skiplock.NewClient(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 2 {
		res, err := c.Insert(ctx, holdArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Job.ID)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildHolder$", "-test.v")
	cmd.Env = append(os.Environ(), stopChildEnv+"="+path)
	out, err := os.Create(filepath.Join(t.TempDir(), "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); out.Close() })
	state := func(id int64) skiplock.JobState {
		j, err := c.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j.State
	}
	testwait.Until(t, 60*time.Second, "both jobs running in the other process", func() bool {
		return state(ids[0]) == skiplock.StateRunning && state(ids[1]) == skiplock.StateRunning
	})
	if _, err := c.JobCancel(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.JobPause(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "the cancelled job cancelled and the paused one paused", func() bool {
		return state(ids[0]) == skiplock.StateCancelled && state(ids[1]) == skiplock.StatePaused
	})
	causes := map[int64]string{}
	rows, err := d.DB().QueryContext(ctx, `SELECT job_id, cause FROM test_causes`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var cause string
		if err := rows.Scan(&id, &cause); err != nil {
			t.Fatal(err)
		}
		causes[id] = cause
	}
	if causes[ids[0]] != skiplock.ErrCancelled.Error() || causes[ids[1]] != skiplock.ErrPaused.Error() {
		t.Fatalf("causes in the other process: %v", causes)
	}
}

// TestChildHolder is the process of TestStopRequestsCrossProcesses: it runs
// "hold" jobs until their context ends, and records the cause.
func TestChildHolder(t *testing.T) {
	path := os.Getenv(stopChildEnv)
	if path == "" {
		t.Skip("run by TestStopRequestsCrossProcesses")
	}
	ctx := context.Background()
	d, err := sqlitedriver.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ws := skiplock.NewWorkers()
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[holdArgs](func(ctx context.Context, j *skiplock.Job[holdArgs]) error {
		<-ctx.Done()
		cause := context.Cause(ctx)
		_, err := d.DB().ExecContext(context.Background(), `INSERT INTO test_causes (job_id, cause) VALUES (?, ?)`, j.ID, cause.Error())
		return errors.Join(cause, err)
	}))
	c, err := skiplock.NewClient(d, &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {}},
		Workers: ws, FetchPollInterval: 50 * time.Millisecond, Lease: 2 * time.Hour, HeartbeatInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Runs until the parent kills it.
	select {}
}
