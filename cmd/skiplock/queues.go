package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

func newQueuesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "queues", Short: "List, pause and resume queues"}
	list := &cobra.Command{Use: "list", Short: "List queues with their live job counts", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, closeDB, err := g.client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			queues, err := c.QueueList(cmd.Context(), false)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "QUEUE\tPAUSED\tPENDING\tSCHEDULED\tRUNNING\tWAITING\tOLDEST_PENDING")
			for _, q := range queues {
				fmt.Fprintf(w, "%s\t%v\t%d\t%d\t%d\t%d\t%s\n", q.Name, q.Paused, q.Counts[skiplock.StatePending],
					q.Counts[skiplock.StateScheduled], q.Counts[skiplock.StateRunning], q.Counts[skiplock.StateWaiting],
					q.OldestPendingAge.Round(1e9))
			}
			return w.Flush()
		}}
	act := func(use, short string, pause bool) *cobra.Command {
		return &cobra.Command{Use: use + " QUEUE", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, closeDB, err := g.client(cmd.Context())
				if err != nil {
					return err
				}
				defer closeDB()
				if pause {
					err = c.QueuePause(cmd.Context(), args[0])
				} else {
					err = c.QueueResume(cmd.Context(), args[0])
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "queue %s %sd\n", args[0], use)
				return nil
			}}
	}
	cmd.AddCommand(list, act("pause", "Stop claims from a queue (running jobs finish)", true),
		act("resume", "Let workers claim from a queue again", false))
	return cmd
}
