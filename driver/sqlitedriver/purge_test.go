package sqlitedriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestPurgeDeletesInSeveralTransactions: a purge longer than one of its
// transactions deletes every job it is given.
func TestPurgeDeletesInSeveralTransactions(t *testing.T) {
	d := sqlitetest.New(t)
	ctx := t.Context()
	const n = 120 // more than two of the purge's transactions
	in := make([]*driver.InsertParams, n)
	for i := range in {
		in[i] = &driver.InsertParams{Kind: "k", Queue: "q", Priority: 5}
	}
	if _, err := d.JobInsertMany(ctx, in); err != nil {
		t.Fatal(err)
	}
	jobs, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "q", WorkerID: "w", Max: n, DefaultLease: time.Minute})
	if err != nil || len(jobs) != n {
		t.Fatalf("claimed %d jobs, %v", len(jobs), err)
	}
	done := make([]driver.CompleteParams, n)
	for i, j := range jobs {
		done[i] = driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: "w"}}
	}
	if _, err := d.JobCompleteMany(ctx, done); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	from, to := now.Add(-time.Hour), now.Add(time.Hour)
	refs, err := d.ArchiveExpired(ctx, driver.ExpiredParams{From: from, To: to, Before: to, Now: now, Limit: 2 * n})
	if err != nil || len(refs) != n {
		t.Fatalf("expired: %d jobs, %v", len(refs), err)
	}
	gone, err := d.ArchiveDelete(ctx, refs, from, to, now)
	if err != nil || len(gone) != n {
		t.Fatalf("purged %d of %d jobs, %v", len(gone), n, err)
	}
	var left int
	if err := d.DB().QueryRowContext(ctx, "SELECT count(*) FROM skiplock_jobs_archive").Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d archived jobs left, %v", left, err)
	}
	if w := sqlitedriver.Wanting(d).Load(); w != 0 {
		t.Fatalf("%d writes still counted as waiting for the writer after the purge", w)
	}
}

// TestPurgeGivesWayToWaitingWrites: between two of its transactions the
// purge waits while a write is on its way to the writer, and for no
// longer than it is allowed to or than its context lasts.
func TestPurgeGivesWayToWaitingWrites(t *testing.T) {
	d := sqlitetest.New(t)
	wanting := sqlitedriver.Wanting(d)
	wanting.Add(1)
	sqlitedriver.GiveWay(t.Context(), d, 0) // allowed no wait: returns with the write still waiting

	returned := make(chan struct{})
	go func() {
		sqlitedriver.GiveWay(t.Context(), d, time.Hour)
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("the purge went on while a write was waiting")
	case <-time.After(50 * time.Millisecond):
	}
	wanting.Add(-1)
	<-returned

	// A purge whose context ended waits no more.
	wanting.Add(1)
	defer wanting.Add(-1)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	sqlitedriver.GiveWay(ctx, d, time.Hour)
}

// TestBulkActionGivesWayToWaitingWrites: a bulk action's batch waits, as
// the purge's transactions do, while a write is on its way to the writer,
// then does its work.
func TestBulkActionGivesWayToWaitingWrites(t *testing.T) {
	d := sqlitetest.New(t)
	ctx := t.Context()
	res, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "k", Queue: "q", Priority: 5, Paused: true}})
	if err != nil {
		t.Fatal(err)
	}
	sqlitedriver.BulkHeld(d).Store(int64(time.Hour)) // the batch before held the writer that long
	wanting := sqlitedriver.Wanting(d)
	wanting.Add(1)
	type result struct {
		jobs []*driver.Job
		err  error
	}
	returned := make(chan result, 1)
	go func() {
		jobs, err := d.JobResumeMany(ctx, driver.Chunk{IDs: []int64{res[0].Job.ID}})
		returned <- result{jobs, err}
	}()
	select {
	case <-returned:
		t.Fatal("the batch went on while a write was waiting")
	case <-time.After(50 * time.Millisecond):
	}
	wanting.Add(-1)
	r := <-returned
	if r.err != nil || len(r.jobs) != 1 || r.jobs[0].State != driver.StatePending {
		t.Fatalf("resumed %v, %v; want the job pending", r.jobs, r.err)
	}
	if held := time.Duration(sqlitedriver.BulkHeld(d).Load()); held >= time.Hour {
		t.Fatalf("after the batch the writer counts as held %s: the batch's own hold was not noted", held)
	}
}
