package pgdriver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// BenchmarkJobClaimFair claims 1,000 jobs a claim, plain (after the place
// the last claim ended, as a producer does) and fair, from a backlog of
// 20,000 jobs of one tenant or spread over a hundred, each claim's jobs
// completed and as many inserted before the next: the steady state of an
// e2e run, dead index entries included.
func BenchmarkJobClaimFair(b *testing.B) {
	for _, c := range []struct {
		name    string
		tenants int
		fair    bool
		head    bool
	}{{"plain", 1, false, false}, {"plain-head", 1, false, true}, {"fair-1-tenant", 1, true, false},
		{"plain-100-tenants", 100, false, false}, {"fair-100-tenants", 100, true, false}} {
		b.Run(c.name, func(b *testing.B) {
			d, _ := pgtest.Schema(b)
			ctx := context.Background()
			p := driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 1000, DefaultLease: time.Minute}
			if c.fair {
				p.Fair = &driver.FairShare{}
			}
			jobs := benchJobs(1000)
			for i, j := range jobs {
				j.Tenant = fmt.Sprintf("t%d", i%c.tenants)
			}
			for range 21 {
				if _, err := d.JobInsertFast(ctx, jobs); err != nil {
					b.Fatal(err)
				}
			}
			claimed := 0
			for b.Loop() {
				got, err := d.JobClaim(ctx, p)
				if err != nil || len(got) != 1000 {
					b.Fatalf("claim: %d jobs, %v", len(got), err)
				}
				claimed += len(got)
				b.StopTimer()
				if !c.fair && !c.head {
					k := got[len(got)-1].Key()
					p.After = &k
				}
				done := make([]driver.CompleteParams, len(got))
				for i, j := range got {
					done[i] = driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: "w"}}
				}
				if _, err := d.JobCompleteMany(ctx, done); err != nil {
					b.Fatal(err)
				}
				if _, err := d.JobInsertFast(ctx, jobs); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(claimed)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
