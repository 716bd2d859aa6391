package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock/bench"
)

func init() { extraCommands = append(extraCommands, newBenchProducerCmd) }

// newBenchProducerCmd is the producer process of `skiplock bench --mode
// latency-remote` and `latency-http`: hidden, run by the bench, not by
// users.
func newBenchProducerCmd(g *globals) *cobra.Command {
	var c bench.ProducerConfig
	cmd := &cobra.Command{
		Use:    "bench-producer",
		Short:  "The producer process of skiplock bench's remote latency modes",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (c.Server == "") == (g.databaseURL == "") {
				return usagef("bench-producer: give --server or --database-url")
			}
			if c.Rate < 1 || c.Duration <= 0 {
				return usagef("bench-producer: --rate must be at least 1 and --duration above 0")
			}
			c.DatabaseURL = g.databaseURL
			return bench.RunProducer(cmd.Context(), c, os.Stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Server, "server", "", "server URL: enqueue through POST /v1/jobs")
	f.Float64Var(&c.Rate, "rate", bench.DefaultRate, "jobs enqueued per second, one at a time")
	f.DurationVar(&c.Duration, "duration", 10*time.Second, "how long to enqueue")
	return cmd
}
