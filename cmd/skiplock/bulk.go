package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

// bulkFlags are the selection of `jobs retry|cancel|delete|pause|resume`
// without an id.
type bulkFlags struct {
	states, kinds, queues   []string
	tenant                  string
	olderThan               time.Duration
	errorType, errorMessage string
	ids                     []int64
	payload, metadata       []string
	dryRun                  bool
	batch                   int
}

var bulkPast = map[skiplock.BulkAction]string{
	skiplock.BulkRetry: "retried", skiplock.BulkCancel: "cancelled", skiplock.BulkDelete: "deleted",
	skiplock.BulkPause: "paused", skiplock.BulkResume: "resumed",
}

// withBulk lets a by-id command (retry ID, cancel ID, …) act on a selection
// instead when it is given no id but filter flags.
func withBulk(g *globals, action skiplock.BulkAction, cmd *cobra.Command) *cobra.Command {
	bf := addBulkFlags(cmd)
	byID := cmd.RunE
	cmd.Use += " | " + cmd.Name() + " --state … --kind … --queue … --older-than … --error-type … --payload … --id …"
	cmd.Args = cobra.RangeArgs(0, 1)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			if name := changedBulkFlag(cmd); name != "" {
				return usagef("--%s: give a job id or a selection, not both", name)
			}
			return byID(cmd, args)
		}
		return runBulk(cmd, g, action, bf)
	}
	return cmd
}

func newJobsDeleteCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "delete --state … --kind … --queue … --older-than …",
		Short: "Delete finished jobs (completed, failed, cancelled) from the archive for good",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("jobs delete takes no job id: it deletes a selection (--state, --kind, --queue, --tenant, --older-than, --id, …)")
			}
			return nil
		}}
	bf := addBulkFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runBulk(cmd, g, skiplock.BulkDelete, bf) }
	return cmd
}

func addBulkFlags(cmd *cobra.Command) *bulkFlags {
	bf := &bulkFlags{}
	f := cmd.Flags()
	f.StringSliceVar(&bf.states, "state", nil, "only jobs in these states (repeatable or comma-separated)")
	f.StringSliceVar(&bf.kinds, "kind", nil, "only jobs of these kinds (repeatable or comma-separated)")
	f.StringSliceVar(&bf.queues, "queue", nil, "only jobs of these queues (repeatable or comma-separated)")
	f.StringVar(&bf.tenant, "tenant", "", "only jobs of this tenant")
	f.DurationVar(&bf.olderThan, "older-than", 0, "only jobs created (cancel, pause, resume) or finished (retry, delete) longer ago than this, e.g. 24h")
	f.StringVar(&bf.errorType, "error-type", "", "only jobs with an attempt error of this type")
	f.StringVar(&bf.errorMessage, "error-message", "", "only jobs with an attempt error whose message contains this text (letters compared without case)")
	f.Int64SliceVar(&bf.ids, "id", nil, "only these jobs (repeatable or comma-separated)")
	f.StringArrayVar(&bf.payload, "payload", nil, "only jobs whose payload has KEY:VALUE (KEY a.b reaches into objects; VALUE as JSON when it is JSON; repeatable)")
	f.StringArrayVar(&bf.metadata, "metadata", nil, "only jobs whose metadata has KEY:VALUE (VALUE as JSON when it is JSON; repeatable)")
	f.BoolVar(&bf.dryRun, "dry-run", false, "count the jobs, change nothing")
	f.IntVar(&bf.batch, "batch-size", 0, "jobs per batch and transaction (1-10000; default 20 on SQLite, 5000 on PostgreSQL)")
	return bf
}

func changedBulkFlag(cmd *cobra.Command) string {
	for _, name := range []string{"state", "kind", "queue", "tenant", "older-than", "error-type", "error-message",
		"id", "payload", "metadata", "dry-run", "batch-size"} {
		if cmd.Flags().Changed(name) {
			return name
		}
	}
	return ""
}

func runBulk(cmd *cobra.Command, g *globals, action skiplock.BulkAction, bf *bulkFlags) error {
	p := skiplock.BulkParams{Action: action, DryRun: bf.dryRun, BatchSize: bf.batch,
		Filter: skiplock.BulkFilter{Kinds: bf.kinds, Queues: bf.queues, OlderThan: bf.olderThan,
			ErrorType: bf.errorType, ErrorMessage: bf.errorMessage, IDs: bf.ids}}
	if cmd.Flags().Changed("tenant") {
		p.Filter.Tenant = &bf.tenant
	}
	if err := checkBulkFlags(action, bf, &p); err != nil {
		return err
	}
	c, closeDB, err := g.existingClient(cmd.Context())
	if err != nil {
		return err
	}
	defer closeDB()
	verb := bulkPast[action]
	if bf.dryRun {
		verb = "counted"
	}
	bar := newProgress(cmd.ErrOrStderr(), verb, 0)
	p.Progress = func(done int) { bar.update(done, 0) }
	start := time.Now()
	res, err := c.JobsBulk(cmd.Context(), p)
	bar.finish()
	if err != nil && res.Done > 0 {
		return fmt.Errorf("%s: %w (%s jobs %s before it)", action, err, thousands(int64(res.Done)), verb)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	// As POST /v1/jobs/bulk answers.
	answer := map[string]any{"action": action, "matched": res.Matched, "done": res.Done}
	if bf.dryRun {
		return output(cmd, answer, line("would %s %s jobs", action, thousands(int64(res.Matched))))
	}
	return output(cmd, answer, line("%s %s jobs of %s matched %s", verb, thousands(int64(res.Done)),
		thousands(int64(res.Matched)), rateLine(res.Done, time.Since(start))))
}

func checkBulkFlags(action skiplock.BulkAction, bf *bulkFlags, p *skiplock.BulkParams) error {
	if bf.olderThan < 0 {
		return usagef("--older-than: must not be negative")
	}
	if bf.batch < 0 || bf.batch > 10000 {
		return usagef("--batch-size: must be between 1 and 10000, got %d", bf.batch)
	}
	for _, id := range bf.ids {
		if id <= 0 {
			return usagef("--id: %d is not a job id (a positive integer)", id)
		}
	}
	var err error
	if p.Filter.Metadata, p.Filter.Payload, err = jsonFilterFlags(bf.metadata, bf.payload); err != nil {
		return err
	}
	for _, s := range bf.states {
		st := skiplock.JobState(s)
		if !st.Valid() {
			return usagef("--state: unknown state %q (scheduled, waiting, pending, running, paused, completed, failed, cancelled)", s)
		}
		p.Filter.States = append(p.Filter.States, st)
	}
	if p.Filter.Empty() {
		return usagef("name at least one of --state, --kind, --queue, --tenant, --older-than, --error-type, --error-message, --id, --payload, --metadata (%s acts on no job without a selection)", action)
	}
	// An empty --tenant (often "$TENANT" unset) alone would select the
	// default tenant's jobs: every job of a queue used without tenants.
	if t := p.Filter.Tenant; t != nil && *t == "" {
		f := p.Filter
		f.Tenant = nil
		if f.Empty() {
			return usagef("--tenant: empty, and alone it selects every job without a tenant; add --state, --kind, --queue, --older-than or another filter")
		}
	}
	return nil
}
