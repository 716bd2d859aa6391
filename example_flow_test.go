package skiplock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock"
)

// ReportArgs is the payload of a "report" job.
type ReportArgs struct {
	Month string `json:"month"`
}

func (ReportArgs) Kind() string { return "report" }

// A per-tenant cap is a concurrency key on the tenant: at most one report
// per tenant runs at once, across every process on the database; the
// others wait, pending, with their attempt unspent.
func ExampleFlowRule() {
	drv, done := openSQLite()
	defer done()
	ctx := context.Background()
	client, err := skiplock.NewClient(drv, &skiplock.Config{Flow: []skiplock.FlowRule{
		{Name: "per-tenant", Queue: "reports", Key: "tenant", Concurrency: 1},
		{Name: "per-month", Queue: "reports", Key: "payload.month", Rate: 10, Per: time.Second},
	}})
	if err != nil {
		panic(err)
	}
	for _, tenant := range []string{"acme", "acme", "globex"} {
		opts := &skiplock.InsertOpts{Queue: "reports", Tenant: tenant}
		if _, err := client.Insert(ctx, ReportArgs{Month: "2026-11"}, opts); err != nil {
			panic(err)
		}
	}
	jobs, err := client.Claim(ctx, skiplock.ClaimParams{Queue: "reports", WorkerID: "w", Max: 10})
	if err != nil {
		panic(err)
	}
	for _, j := range jobs {
		fmt.Println("started a report of", j.Tenant)
	}
	queues, err := client.QueueList(ctx, false)
	if err != nil {
		panic(err)
	}
	for _, f := range queues[0].Flow {
		fmt.Printf("%s: %d running over %d keys\n", f.Rule, f.Running, f.Keys)
	}
	// Output:
	// started a report of acme
	// started a report of globex
	// per-tenant: 2 running over 2 keys
	// per-month: 0 running over 1 keys
}
