package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/server"
)

func newJobsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "List, show, retry, cancel, pause, resume and delete jobs"}
	cmd.AddCommand(newJobsListCmd(g))
	act := func(use, short, done string, do func(*skiplock.Client, context.Context, int64) (*skiplock.JobRow, error)) *cobra.Command {
		return addJSONFlag(&cobra.Command{Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
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
				j, err := do(c, cmd.Context(), id)
				if err != nil {
					return fmt.Errorf("job %d: %w", id, err)
				}
				human := jobDetail(j)
				if done != "" {
					human = line("job %d %s: %s", j.ID, done, attemptText(j))
				}
				return output(cmd, jobAnswer{Job: jobView(j)}, human)
			}})
	}
	show := act("show", "Show a job", "", (*skiplock.Client).JobGet)
	show.SuggestFor = []string{"get", "view", "info", "describe"}
	cmd.AddCommand(
		show,
		withBulk(g, skiplock.BulkRetry, act("retry", "Return a failed or cancelled job (or a selection) to pending", "retried", (*skiplock.Client).JobRetry)),
		withBulk(g, skiplock.BulkCancel, act("cancel", "Cancel a job or a selection (a running one ends when its worker stops)", "cancelled", (*skiplock.Client).JobCancel)),
		withBulk(g, skiplock.BulkPause, act("pause", "Hold a job or a selection (a running one is asked to pause and goes to paused when its worker stops)", "paused", (*skiplock.Client).JobPause)),
		withBulk(g, skiplock.BulkResume, act("resume", "Release a paused job or a selection", "resumed", (*skiplock.Client).JobResume)),
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
		meta   []string
		pay    []string
		ranges listRanges
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
			var err error
			if p.Metadata, p.Payload, err = jsonFilterFlags(meta, pay); err != nil {
				return err
			}
			if err := ranges.apply(&p); err != nil {
				return err
			}
			if p.Limit < 1 || p.Limit > skiplock.MaxJobListLimit {
				return usagef("--limit: must be between 1 and %d, got %d", skiplock.MaxJobListLimit, p.Limit)
			}
			c, closeDB, err := g.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			page, err := server.ListJobs(cmd.Context(), c, p)
			if err != nil {
				return err
			}
			return output(cmd, page, func(w io.Writer) error {
				t := newTable(w, "ID", "KIND", "QUEUE", "STATE", "ATTEMPT", "PRIORITY", "RUN_AT")
				for _, j := range page.Jobs {
					t.row(j.ID, j.Kind, j.Queue, j.State, attemptCell(j.Attempt, j.MaxRetries), j.Priority,
						j.RunAt.Format(time.RFC3339))
				}
				if err := t.flush(); err != nil {
					return err
				}
				if page.NextCursor != "" {
					_, err = fmt.Fprintf(w, "next page: --cursor %s\n", page.NextCursor)
				}
				return err
			})
		}}
	f := cmd.Flags()
	f.StringSliceVar(&states, "state", nil, "only these states (repeatable or comma-separated)")
	f.StringVar(&p.Kind, "kind", "", "only this kind")
	f.StringVar(&p.Queue, "queue", "", "only this queue")
	f.StringVar(&tenant, "tenant", "", "only this tenant")
	f.StringVar(&p.WorkflowID, "workflow-id", "", "only this workflow")
	f.StringArrayVar(&p.Tags, "tag", nil, "only jobs carrying this tag (repeatable: every one)")
	f.StringArrayVar(&meta, "metadata", nil, "only jobs whose metadata has KEY:VALUE (VALUE as JSON when it is JSON; repeatable)")
	f.StringVar(&p.WorkerID, "worker-id", "", "only jobs last run by this worker")
	f.StringArrayVar(&pay, "payload", nil, "only jobs whose payload has KEY:VALUE (KEY a.b reaches into objects; VALUE as JSON when it is JSON; repeatable)")
	f.StringVar(&p.ErrorType, "error-type", "", "only jobs with an attempt error of this type")
	f.StringVar(&p.ErrorMessage, "error-message", "", "only jobs with an attempt error whose message contains this text (letters compared without case)")
	f.StringVar(&p.IdempotencyKey, "idempotency-key", "", "only jobs inserted under this idempotency key")
	ranges.flags(f)
	f.IntVar(&p.Limit, "limit", 50, "at most this many")
	f.Int64Var(&p.BeforeID, "cursor", 0, "list jobs older than this id (the last id of the previous page)")
	return addJSONFlag(cmd)
}

// jsonFilterFlags reads --metadata and --payload KEY:VALUE pairs, as GET
// /v1/jobs reads metadata= and payload=.
func jsonFilterFlags(meta, payload []string) (map[string]any, map[string]any, error) {
	m, err := server.MetadataFilter(meta)
	if err != nil {
		return nil, nil, usagef("--metadata: %v", err)
	}
	p, err := server.MetadataFilter(payload)
	if err != nil {
		return nil, nil, usagef("--payload: %v", err)
	}
	return m, p, nil
}
