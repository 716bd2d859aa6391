package sqlitedriver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// childEnv switches the test binary into a worker process on that file.
const childEnv = "SKIPLOCK_SQLITE_CHILD_DB"

type countArgs struct {
	N int `json:"n"`
}

func (countArgs) Kind() string { return "count" }

// TestTwoProcessesShareWork runs two worker processes on one file: every
// job runs exactly once.
func TestTwoProcessesShareWork(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const jobs = 500
	path := filepath.Join(t.TempDir(), "shared.db")
	d := sqlitetest.Open(t, path)
	ctx := t.Context()
	if _, err := d.DB().ExecContext(ctx, `CREATE TABLE test_executions (job_id INTEGER NOT NULL, pid INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	c, err := skiplock.NewClient(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	params := make([]skiplock.InsertManyParams, jobs)
	for i := range params {
		params[i] = skiplock.InsertManyParams{Args: countArgs{N: i}}
	}
	if _, err := c.InsertMany(ctx, params); err != nil {
		t.Fatal(err)
	}
	var procs []*exec.Cmd
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildWorker$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		out, err := os.Create(filepath.Join(t.TempDir(), fmt.Sprintf("child%d.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		t.Cleanup(func() { _ = cmd.Process.Kill(); out.Close() })
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			log, _ := os.ReadFile(p.Stdout.(*os.File).Name())
			t.Fatalf("worker process %d: %v\n%s", i, err, log)
		}
	}
	var runs, distinct, pids, completed int
	err = d.DB().QueryRowContext(ctx, `SELECT count(*), count(DISTINCT job_id), count(DISTINCT pid) FROM test_executions`).
		Scan(&runs, &distinct, &pids)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.DB().QueryRowContext(ctx, `SELECT count(*) FROM skiplock_jobs_archive WHERE state = 'completed'`).Scan(&completed); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d runs of %d jobs in %d processes; %d completed", runs, distinct, pids, completed)
	if runs != jobs || distinct != jobs || completed != jobs {
		t.Fatalf("%d runs of %d distinct jobs, %d completed; want each of %d once", runs, distinct, completed, jobs)
	}
}

// TestChildWorker is the worker process of TestTwoProcessesShareWork: it
// works the file until no live job is left.
func TestChildWorker(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("run by TestTwoProcessesShareWork")
	}
	ctx := context.Background()
	d, err := sqlitedriver.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pid := os.Getpid()
	ws := skiplock.NewWorkers()
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[countArgs](func(ctx context.Context, j *skiplock.Job[countArgs]) error {
		time.Sleep(time.Millisecond)
		_, err := d.DB().ExecContext(ctx, `INSERT INTO test_executions (job_id, pid) VALUES (?, ?)`, j.ID, pid)
		return err
	}))
	c, err := skiplock.NewClient(d, &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 20}},
		Workers: ws, FetchPollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var live int
		if err := d.DB().QueryRowContext(ctx, `SELECT count(*) FROM skiplock_jobs`).Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
}
