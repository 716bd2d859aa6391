package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock/bench"
)

func init() { extraCommands = append(extraCommands, newBenchWorkerCmd) }

// newBenchWorkerCmd is the worker process of `skiplock bench --mode http`
// and `--procs`: hidden, run by the bench, not by users.
func newBenchWorkerCmd(g *globals) *cobra.Command {
	var w bench.HTTPWorker
	var lib bench.LibWorkerConfig
	cmd := &cobra.Command{
		Use:    "bench-worker",
		Short:  "A worker process of skiplock bench",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (w.Server == "") == (g.databaseURL == "") {
				return usagef("bench-worker: give --server or --database-url")
			}
			var worked atomic.Int64
			ctx, stop := context.WithCancel(cmd.Context())
			defer stop()
			var wg sync.WaitGroup
			report, stopReport := context.WithCancel(context.WithoutCancel(ctx))
			wg.Go(func() { bench.ReportWorked(report, os.Stdout, &worked) })
			ready := func() { fmt.Fprintln(os.Stdout, bench.ReadyLine) }
			var err error
			if w.Server != "" {
				w.Ready, w.Claims = ready, &bench.ClaimHist{}
				err = w.Run(ctx, &worked)
			} else {
				lib.DatabaseURL = g.databaseURL
				err = bench.RunLibWorker(ctx, lib, &worked, ready)
			}
			stopReport()
			wg.Wait()
			if w.Claims != nil {
				fmt.Fprintln(os.Stdout, w.Claims.String())
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&w.Server, "server", "", "server URL: work over HTTP")
	f.StringVar(&w.Queue, "queue", bench.Queue, "queue to work")
	f.StringVar(&w.WorkerID, "worker-id", "bench", "worker id (HTTP)")
	f.IntVar(&w.Max, "claim-max", bench.DefaultClaimMax, "jobs per claim (HTTP)")
	f.IntVar(&w.Loops, "loops", bench.DefaultLoops, "claims in flight at once (HTTP)")
	f.BoolVar(&w.H2C, "h2c", false, "HTTP/2 without TLS (HTTP)")
	f.BoolVar(&w.FullJobs, "full-jobs", false, "claims answer whole job objects (HTTP)")
	f.BoolVar(&w.SeparateReports, "separate-reports", false, "report each claim's jobs in a call of their own, not with the next claim (HTTP)")
	f.IntVar(&lib.Workers, "workers", 0, "MaxWorkers (library)")
	f.DurationVar(&lib.FetchCooldown, "fetch-cooldown", 0, "least time between two claims (library)")
	f.DurationVar(&lib.FetchPollInterval, "poll-interval", time.Duration(0), "fallback claim interval (library)")
	f.IntVar(&lib.CompleterBatch, "completer-batch", 0, "most completions per flush (library)")
	addPoolFlags(f, &lib.Pools)
	return cmd
}
