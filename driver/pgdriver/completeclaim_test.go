package pgdriver_test

import (
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestCompleteClaimIsOneTransaction: when the claim of a report-and-claim
// fails, the report is rolled back with it: the job is still the worker's.
// A plain claim (one pipeline), a fair one and a flow one (a transaction).
func TestCompleteClaimIsOneTransaction(t *testing.T) {
	t.Parallel()
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	for name, set := range map[string]func(p *driver.ClaimParams){
		"plain": func(*driver.ClaimParams) {},
		"fair":  func(p *driver.ClaimParams) { p.Fair = &driver.FairShare{} },
		"flow":  func(p *driver.ClaimParams) { p.Flow = true },
	} {
		queue := "q-" + name
		if _, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "k", Queue: queue, Payload: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		claim := driver.ClaimParams{Queue: queue, WorkerID: "w", Max: 1, DefaultLease: time.Minute}
		set(&claim)
		jobs, err := d.JobClaim(ctx, claim)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("%s: claim: %d jobs, %v", name, len(jobs), err)
		}
		j := jobs[0]
		report := []driver.CompleteParams{{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: "w"}}}
		bad := claim
		bad.Queue = queue + "\x00" // PostgreSQL takes no NUL in text: the claim fails
		if _, _, err := d.JobCompleteClaim(ctx, report, bad); err == nil {
			t.Fatalf("%s: a claim of a queue named with a NUL succeeded", name)
		}
		got, err := d.JobGet(ctx, j.ID)
		if err != nil || got.State != driver.StateRunning || got.WorkerID != "w" {
			t.Fatalf("%s: after the failed claim the reported job is %+v, %v; want it running, still the worker's", name, got, err)
		}
		done, _, err := d.JobCompleteClaim(ctx, report, claim)
		if err != nil || len(done) != 1 || done[0].ID != j.ID {
			t.Fatalf("%s: the report again: finished %v, %v", name, done, err)
		}
	}
}
