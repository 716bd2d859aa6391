package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// Two releases of one waiting job: the completion of its parent, and the
// leader's settling, whose statement saw the job without parents before
// the completion's release committed. The leader's update waits for the
// job's row, finds it pending and passes it over, but its transaction keeps
// the row locked until it commits, so a claim woken by the completion's
// release skips the job. The leader's commit must wake the queue again, or
// the job waits for the next poll.
func TestReleaseLostToAnotherStillWakesTheQueue(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	claim := func() []*driver.Job {
		t.Helper()
		got, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 10, DefaultLease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if _, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "k", Queue: "default", MaxRetries: 3}}); err != nil {
		t.Fatal(err)
	}
	parent := claim()[0]
	res, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "k", Queue: "default", MaxRetries: 3, DependsOn: []int64{parent.ID}}})
	if err != nil || res[0].Job.State != driver.StateWaiting {
		t.Fatalf("child: %+v, %v", res, err)
	}
	child := res[0].Job

	wakes := make(chan string, 16)
	listenCtx, stopListening := context.WithCancel(ctx)
	listened := make(chan error, 1)
	go func() {
		listened <- d.Notifier().Listen(listenCtx, func(q string) { wakes <- q }, func(int64) {})
	}()
	t.Cleanup(func() { stopListening(); <-listened })
	if q := nextWake(t, wakes); q != "" {
		t.Fatalf("first wake-up %q, want the listener's start", q)
	}

	// The completion's first statement: the parent's link is gone.
	if _, err := d.Pool().Exec(ctx, `DELETE FROM skiplock_job_deps WHERE parent_id = $1`, parent.ID); err != nil {
		t.Fatal(err)
	}
	// Its release, not yet committed.
	completion, inCompletion := driverTx(t, d)
	if queues, err := inCompletion.ReleaseWaiting(ctx); err != nil || len(queues) != 1 || queues[0] != "default" {
		t.Fatalf("the completion's release: %v, %v", queues, err)
	}
	// The leader's, waiting for the child's row.
	leader, inLeader := driverTx(t, d)
	var leaderPID int
	if err := leader.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&leaderPID); err != nil {
		t.Fatal(err)
	}
	type released struct {
		queues []string
		err    error
	}
	leaderDone := make(chan released, 1)
	go func() {
		queues, err := inLeader.ReleaseWaiting(ctx)
		leaderDone <- released{queues, err}
	}()
	testwait.Until(t, 30*time.Second, "the leader's release waiting for the child's row", func() bool {
		var n int
		err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE pid = $1 AND NOT granted`, leaderPID).Scan(&n)
		return err == nil && n == 1
	})
	if err := completion.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if q := nextWake(t, wakes); q != "default" {
		t.Fatalf("the completion's wake-up: %q", q)
	}
	r := <-leaderDone
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := claim(); len(got) != 0 {
		t.Fatalf("claim beside the leader's open transaction: %d jobs; the test no longer shows the skipped row", len(got))
	}
	if err := leader.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case q := <-wakes:
		if q != "default" {
			t.Fatalf("wake-up after the leader's commit: %q", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake-up after the leader's commit (its release answered %v): the child waits for the next poll", r.queues)
	}
	if got := claim(); len(got) != 1 || got[0].ID != child.ID {
		t.Fatalf("claim after the leader's commit: %+v, want job %d", got, child.ID)
	}
}

// nextWake answers the next wake-up, failing the test after 30 s.
func nextWake(t *testing.T, wakes <-chan string) string {
	t.Helper()
	select {
	case q := <-wakes:
		return q
	case <-time.After(30 * time.Second):
		t.Fatal("no wake-up")
		return ""
	}
}
