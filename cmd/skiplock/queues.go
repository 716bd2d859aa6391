package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

func newQueuesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "queues", Short: "List, pause and resume queues"}
	list := &cobra.Command{Use: "list", Short: "List queues with their live job counts", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, closeDB, err := g.existingClient(cmd.Context())
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
		var create bool
		c := &cobra.Command{Use: use + " QUEUE", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return queueAction(cmd, g, args[0], pause, create)
			}}
		c.Flags().BoolVar(&create, "create", false, "make the queue when it has no settings and no jobs yet")
		return c
	}
	cmd.AddCommand(list, act("pause", "Stop claims from a queue (running jobs finish)", true),
		act("resume", "Let workers claim from a queue again", false))
	return cmd
}

// queueAction pauses or resumes a queue. An unknown queue is refused (a
// typo would pause nothing in silence) unless create is set.
func queueAction(cmd *cobra.Command, g *globals, name string, pause, create bool) error {
	open := g.existingClient
	if create {
		open = g.client
	}
	c, closeDB, err := open(cmd.Context())
	if err != nil {
		return err
	}
	defer closeDB()
	opts := skiplock.QueueActionOpts{Create: create}
	if pause {
		err = c.QueuePause(cmd.Context(), name, opts)
	} else {
		err = c.QueueResume(cmd.Context(), name, opts)
	}
	if errors.Is(err, skiplock.ErrNotFound) {
		return fmt.Errorf("%w; pass --create to make it", err)
	}
	if err != nil {
		return err
	}
	verb := "resumed"
	if pause {
		verb = "paused"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "queue %s %s\n", name, verb)
	return nil
}
