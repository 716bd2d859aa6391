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
		asJSON, partial            bool
		jsonl                      string
	)
	cmd := &cobra.Command{
		Use:   "enqueue KIND [PAYLOAD_JSON | - | @FILE] | enqueue --jsonl FILE|-",
		Short: "Enqueue one job, or a stream of jobs",
		Example: `  skiplock enqueue send_email '{"to":"a@example.com"}' --queue mail --priority 8
  skiplock enqueue report --delay 10m --idempotency-key report:2026-11-21
  jq -n '{to: "a@example.com"}' | skiplock enqueue send_email -
  skiplock enqueue send_email @job.json
  skiplock enqueue --jsonl jobs.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if jsonl != "" {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.RangeArgs(1, 2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonl != "" {
				return runJSONL(cmd, g, jsonl, partial)
			}
			if partial {
				return usagef("--partial: only with --jsonl")
			}
			payload, err := readPayload(args[1:], cmd.InOrStdin())
			if err != nil {
				return err
			}
			f := cmd.Flags()
			if f.Changed("priority") {
				opts.Priority = &priority
			}
			if f.Changed("max-retries") {
				opts.MaxRetries = &maxRetries
			}
			if f.Changed("tag") && len(opts.Tags) == 0 {
				return usagef("--tag: must not be empty")
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
	f.StringVar(&jsonl, "jsonl", "", "insert the jobs of this file (- for stdin), one POST /v1/jobs body a line, all or nothing")
	f.BoolVar(&partial, "partial", false, "with --jsonl: commit batch by batch, stop at a bad line")
	f.StringVar(&g.contracts, "contracts", "", "validate and default the job by this contract file (env SKIPLOCK_CONTRACTS)")
	f.StringVar(&g.contractsWin, "contracts-win", "", "when --contracts differs from the stored contracts: stored or file wins")
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
		if t.IsZero() { // to the library the zero time means now
			return usagef("--run-at: must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z in UTC, got %q", runAt)
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
