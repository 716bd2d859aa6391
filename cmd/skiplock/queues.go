package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/server"
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
			views := make([]server.QueueView, len(queues))
			for i, q := range queues {
				views[i] = server.NewQueueView(q)
			}
			return output(cmd, map[string]any{"queues": views}, func(w io.Writer) error {
				t := newTable(w, "QUEUE", "PAUSED", "PENDING", "SCHEDULED", "RUNNING", "WAITING", "OLDEST_PENDING")
				for _, q := range queues {
					t.row(q.Name, q.Paused, q.Counts[skiplock.StatePending], q.Counts[skiplock.StateScheduled],
						q.Counts[skiplock.StateRunning], q.Counts[skiplock.StateWaiting], oldestPending(q))
				}
				if err := t.flush(); err != nil {
					return err
				}
				return printFlow(w, queues)
			})
		}}
	addJSONFlag(list)
	act := func(use, short string, pause bool) *cobra.Command {
		var create bool
		c := &cobra.Command{Use: use + " QUEUE", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return queueAction(cmd, g, args[0], pause, create)
			}}
		c.Flags().BoolVar(&create, "create", false, "make the queue when it has no settings and no jobs yet")
		return addJSONFlag(c)
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
	view, err := server.QueueAfter(cmd.Context(), c, name, pause)
	if err != nil {
		return err
	}
	verb := "resumed"
	if pause {
		verb = "paused"
	}
	return output(cmd, map[string]any{"queue": view}, line("queue %s %s", name, verb))
}

// oldestPending is the age of a queue's oldest pending job, "-" when it has
// none: an empty queue has no age, and "0s" read as a job just enqueued.
func oldestPending(q skiplock.QueueInfo) string {
	if q.Counts[skiplock.StatePending] == 0 {
		return "-"
	}
	return q.OldestPendingAge.Round(time.Second).String()
}
