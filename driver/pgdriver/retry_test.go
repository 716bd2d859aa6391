package pgdriver_test

import (
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestRetryBesideAParentFinishing: a dependent retried in a transaction
// while its parent completes in another ends pending once both commit. The
// retry holds the parent, so the completion waits for it and then releases
// the dependent; without the hold the completion would run first, find no
// waiting dependent to release, and leave the retried job waiting on a
// parent that is gone.
func TestRetryBesideAParentFinishing(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	res, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "parent", Queue: "default", Payload: []byte(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	parent := res[0].Job
	res, err = d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "child", Queue: "default", Payload: []byte(`{}`),
		DependsOn: []int64{parent.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	child := res[0].Job
	if _, err := d.JobCancel(ctx, child.ID); err != nil {
		t.Fatal(err)
	}
	held, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 1, Kinds: []string{"parent"},
		DefaultLease: time.Minute})
	if err != nil || len(held) != 1 {
		t.Fatalf("claim the parent: %d jobs, %v", len(held), err)
	}

	tx, err := d.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	retried, err := tx.(driver.AdminStore).JobRetry(ctx, child.ID)
	if err != nil || retried.State != driver.StateWaiting {
		t.Fatalf("retry beside a running parent: %+v, %v; want waiting", retried, err)
	}
	completed := make(chan error, 1)
	go func() {
		_, err := d.JobComplete(ctx, driver.CompleteParams{HeldJob: driver.HeldJob{ID: parent.ID, Attempt: 1, WorkerID: "w"}})
		completed <- err
	}()
	select {
	case err := <-completed:
		t.Fatalf("the parent completed (%v) while the retry, not yet committed, held it", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-completed; err != nil {
		t.Fatalf("complete the parent: %v", err)
	}
	got, err := d.JobGet(ctx, child.ID)
	if err != nil || got.State != driver.StatePending {
		t.Fatalf("retried dependent after its parent completed: %+v, %v; want pending", got, err)
	}
}
