package skiplock

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

type replicaArgs struct{}

func (replicaArgs) Kind() string { return "replica" }

// TestReadReplica proves where each statement runs when the client reads a
// streaming replica: with the replica's replay paused, a job inserted on
// the primary is missing from lists and counts (they read the replica),
// while JobGet, claims and completions see and change it (the primary),
// and the lag shows; ReadPrimary reads the primary; once replay resumes
// the lists catch up.
func TestReadReplica(t *testing.T) {
	drv, replica := pgtest.Replica(t)
	c, err := NewClient(drv, &Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if !c.ReadsReplica() {
		t.Fatal("ReadsReplica: false for a driver that reads one")
	}
	listed := func(id int64) bool {
		rows, err := c.JobList(ctx, JobListParams{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(rows, func(j *JobRow) bool { return j.ID == id })
	}
	first, err := c.Insert(ctx, replicaArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "the replica replays the first job", func() bool { return listed(first.Job.ID) })

	if _, err := replica.Exec(ctx, `SELECT pg_wal_replay_pause()`); err != nil {
		t.Fatalf("pause the replica's replay: %v", err)
	}
	t.Cleanup(func() { _, _ = replica.Exec(context.Background(), `SELECT pg_wal_replay_resume()`) })
	second, err := c.Insert(ctx, replicaArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The replica receives the insert but does not replay it: it lags.
	testwait.Until(t, 30*time.Second, "the replica lags behind the insert", func() bool {
		lag, ok, err := c.ReplicaLag(ctx)
		if err != nil || !ok {
			t.Fatalf("ReplicaLag: %v, %v, ok %v", lag, err, ok)
		}
		return lag > 0
	})
	if listed(second.Job.ID) {
		t.Fatal("JobList shows a job the paused replica has not replayed: it read the primary")
	}
	onPrimary, err := c.JobList(ReadPrimary(ctx), JobListParams{Limit: 100})
	if err != nil || len(onPrimary) != 2 {
		t.Fatalf("JobList under ReadPrimary: %d jobs, %v; want both, from the primary", len(onPrimary), err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.ByStateKind[StatePending]["replica"]; n != 1 {
		t.Fatalf("Stats counts %d pending jobs, want the 1 the replica replayed", n)
	}
	queues, err := c.QueueList(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(queues) != 1 || queues[0].Counts[StatePending] != 1 {
		t.Fatalf("QueueList: %+v, want one queue with the 1 pending job the replica replayed", queues)
	}
	// A single job, claims and completions are the primary's.
	got, err := c.JobGet(ctx, second.Job.ID)
	if err != nil || got.State != StatePending {
		t.Fatalf("JobGet of the job the replica lacks: %+v, %v", got, err)
	}
	claimed, err := c.Claim(ctx, ClaimParams{Queue: DefaultQueue, WorkerID: "w", Max: 10})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("Claim: %d jobs, %v; want both, from the primary", len(claimed), err)
	}
	for _, j := range claimed {
		if _, _, err := c.Complete(ctx, j.ID, CompleteParams{WorkerID: "w", Attempt: j.Attempt}); err != nil {
			t.Fatalf("Complete %d: %v", j.ID, err)
		}
	}
	if got, err = c.JobGet(ctx, second.Job.ID); err != nil || got.State != StateCompleted {
		t.Fatalf("JobGet after completion: %+v, %v", got, err)
	}
	if listed(second.Job.ID) {
		t.Fatal("JobList shows the completed job while replay is paused")
	}

	if _, err := replica.Exec(ctx, `SELECT pg_wal_replay_resume()`); err != nil {
		t.Fatalf("resume the replica's replay: %v", err)
	}
	testwait.Until(t, 30*time.Second, "the replica catches up", func() bool {
		rows, err := c.JobList(ctx, JobListParams{States: []JobState{StateCompleted}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(rows) == 2
	})
	testwait.Until(t, 30*time.Second, "the lag falls back to zero", func() bool {
		lag, _, err := c.ReplicaLag(ctx)
		return err == nil && lag == 0
	})
}

// TestReadReplicaOff proves that a client on a driver without a replica
// reads no lag and runs no lag query.
func TestReadReplicaOff(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	c, err := NewClient(drv, &Config{})
	if err != nil {
		t.Fatal(err)
	}
	lag, ok, err := c.ReplicaLag(context.Background())
	if ok || err != nil || lag != 0 || c.ReadsReplica() {
		t.Fatalf("ReplicaLag without a replica: %v, %v, %v; ReadsReplica %v", lag, ok, err, c.ReadsReplica())
	}
}
