package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

func newJobsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "List, show, retry, cancel, pause, resume and delete jobs"}
	cmd.AddCommand(newJobsListCmd(g))
	show := func(use, short string, act func(*skiplock.Client, context.Context, int64) (*skiplock.JobRow, error)) *cobra.Command {
		return &cobra.Command{Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := parseID(args[0])
				if err != nil {
					return err
				}
				c, closeDB, err := g.existingClient(cmd.Context())
				if err != nil {
					return err
				}
				defer closeDB()
				j, err := act(c, cmd.Context(), id)
				if err != nil {
					return fmt.Errorf("job %d: %w", id, err)
				}
				return printJSON(cmd.OutOrStdout(), jobView(j))
			}}
	}
	cmd.AddCommand(
		show("show", "Show a job as JSON", (*skiplock.Client).JobGet),
		withBulk(g, skiplock.BulkRetry, show("retry", "Return a failed or cancelled job (or a selection) to pending", (*skiplock.Client).JobRetry)),
		withBulk(g, skiplock.BulkCancel, show("cancel", "Cancel a job or a selection (a running one ends when its worker stops)", (*skiplock.Client).JobCancel)),
		show("pause", "Hold a job that is not running yet", (*skiplock.Client).JobPause),
		show("resume", "Release a paused job", (*skiplock.Client).JobResume),
		newJobsDeleteCmd(g),
	)
	return cmd
}

// parseID reads a job id as the API writes it: plain decimal digits, no
// sign, no leading zero (the server answers 400 to any other form).
func parseID(s string) (int64, error) {
	var id int64
	var err error
	if s != "" && s[0] >= '1' && s[0] <= '9' {
		id, err = strconv.ParseInt(s, 10, 64)
	}
	if id <= 0 || err != nil {
		return 0, usagef("ID: %q is not a job id (a positive integer, plain decimal)", s)
	}
	return id, nil
}

func newJobsListCmd(g *globals) *cobra.Command {
	var (
		p      skiplock.JobListParams
		states []string
		tenant string
		asJSON bool
	)
	cmd := &cobra.Command{Use: "list", Short: "List jobs, newest first, live and archived", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, s := range states {
				st := skiplock.JobState(s)
				if !st.Valid() {
					return usagef("--state: unknown state %q (scheduled, waiting, pending, running, paused, completed, failed, cancelled)", s)
				}
				p.States = append(p.States, st)
			}
			if cmd.Flags().Changed("tenant") {
				p.Tenant = &tenant
			}
			if p.Limit < 1 || p.Limit > 10000 {
				return usagef("--limit: must be between 1 and 10000, got %d", p.Limit)
			}
			c, closeDB, err := g.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			jobs, err := c.JobList(cmd.Context(), p)
			if err != nil {
				return err
			}
			if asJSON {
				views := make([]any, len(jobs))
				for i, j := range jobs {
					views[i] = jobView(j)
				}
				return printJSON(cmd.OutOrStdout(), views)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tKIND\tQUEUE\tSTATE\tATTEMPT\tPRIORITY\tRUN_AT")
			for _, j := range jobs {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d/%d\t%d\t%s\n", j.ID, j.Kind, j.Queue, j.State, j.Attempt,
					j.MaxRetries+1, j.Priority, j.RunAt.Format(time.RFC3339))
			}
			return w.Flush()
		}}
	f := cmd.Flags()
	f.StringSliceVar(&states, "state", nil, "only these states (repeatable or comma-separated)")
	f.StringVar(&p.Kind, "kind", "", "only this kind")
	f.StringVar(&p.Queue, "queue", "", "only this queue")
	f.StringVar(&tenant, "tenant", "", "only this tenant")
	f.StringVar(&p.WorkflowID, "workflow-id", "", "only this workflow")
	f.IntVar(&p.Limit, "limit", 50, "at most this many")
	f.Int64Var(&p.BeforeID, "cursor", 0, "list jobs older than this id (the last id of the previous page)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
