package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

func newEnqueueCmd(g *globals) *cobra.Command {
	var (
		opts                       skiplock.InsertOpts
		priority, maxRetries       int
		runAt, metadata, dependsOn string
		asJSON                     bool
	)
	cmd := &cobra.Command{
		Use:   "enqueue KIND [PAYLOAD_JSON]",
		Short: "Enqueue one job",
		Example: `  skiplock enqueue send_email '{"to":"a@example.com"}' --queue mail --priority 8
  skiplock enqueue report --delay 10m --idempotency-key report:2026-11-21`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			payload := json.RawMessage("{}")
			if len(args) == 2 {
				payload = json.RawMessage(args[1])
				if !json.Valid(payload) {
					return usagef("PAYLOAD_JSON: not valid JSON")
				}
			}
			f := cmd.Flags()
			if f.Changed("priority") {
				opts.Priority = &priority
			}
			if f.Changed("max-retries") {
				opts.MaxRetries = &maxRetries
			}
			if err := parseEnqueueFlags(&opts, runAt, metadata, dependsOn); err != nil {
				return err
			}
			c, closeDB, err := g.client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			res, err := c.Insert(cmd.Context(), skiplock.RawArgs{KindName: args[0], Payload: payload}, &opts)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), jobAnswer{Job: jobView(res.Job), Duplicate: res.Duplicate})
			}
			dup := ""
			if res.Duplicate {
				dup = " (duplicate: the live job with this key)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %d %s kind=%s queue=%s%s\n", res.Job.ID, res.Job.State, res.Job.Kind, res.Job.Queue, dup)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Queue, "queue", "", "queue (default \"default\")")
	f.IntVar(&priority, "priority", skiplock.DefaultPriority, "priority 0-10, higher first")
	f.DurationVar(&opts.Delay, "delay", 0, "run after this long, e.g. 30s, 10m")
	f.StringVar(&runAt, "run-at", "", "run at this time (RFC 3339, from 1970 to 9999 in UTC)")
	f.IntVar(&maxRetries, "max-retries", skiplock.DefaultMaxRetries, "retries after the first attempt")
	f.StringVar(&opts.IdempotencyKey, "idempotency-key", "", "a second enqueue with this key while the job is live returns it")
	f.StringVar(&opts.Tenant, "tenant", "", "owner of the job")
	f.StringVar(&opts.Op, "op", "", "operation, e.g. ingest")
	f.StringSliceVar(&opts.Tags, "tag", nil, "a label (repeatable)")
	f.StringVar(&metadata, "metadata", "", "metadata JSON")
	f.StringVar(&opts.WorkflowID, "workflow-id", "", "workflow the job belongs to")
	f.StringVar(&opts.Stage, "stage", "", "stage of the workflow")
	f.StringVar(&dependsOn, "depends-on", "", "comma-separated job ids the job waits for")
	f.BoolVar(&asJSON, "json", false, "print the job as JSON")
	f.StringVar(&g.contracts, "contracts", "", "validate and default the job by this contract file (env SKIPLOCK_CONTRACTS)")
	return cmd
}

func parseEnqueueFlags(opts *skiplock.InsertOpts, runAt, metadata, dependsOn string) error {
	if opts.Delay < 0 {
		return usagef("--delay: must not be negative")
	}
	if runAt != "" {
		t, err := time.Parse(time.RFC3339, runAt)
		if err != nil {
			return usagef("--run-at: want RFC 3339 time like 2026-11-21T15:04:05Z, got %q", runAt)
		}
		opts.RunAt = t
	}
	if metadata != "" {
		if !json.Valid([]byte(metadata)) {
			return usagef("--metadata: not valid JSON")
		}
		opts.Metadata = json.RawMessage(metadata)
	}
	if dependsOn != "" {
		for _, s := range strings.Split(dependsOn, ",") {
			id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil || id <= 0 {
				return usagef("--depends-on: %q is not a job id", s)
			}
			opts.DependsOn = append(opts.DependsOn, id)
		}
	}
	return nil
}
