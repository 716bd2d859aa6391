package main

import (
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/vault"
)

// restoreAnswer is the --json form of `vault restore`.
type restoreAnswer struct {
	Vault  string `json:"vault"`
	Into   string `json:"into"`
	DryRun bool   `json:"dry_run"`
	vault.RestoreResult
	Seconds float64 `json:"seconds"`
}

func newVaultRestoreCmd(g *globals) *cobra.Command {
	var (
		vf     vaultFlags
		p      vault.RestoreParams
		states []string
		tenant string
		into   string
	)
	cmd := &cobra.Command{Use: "restore", Short: "Put jobs from the vault back into the queue (retried) or the archive", Args: cobra.NoArgs,
		Long: `Put the jobs of the vault that finished in [--from, --to) and match the filters
back into the database, with their ids. --into queue retries each (failed and
cancelled jobs): pending again, its attempts counting on, its errors kept, its
retry budget back, as 'jobs retry' does. --into archive puts each back as the
vault holds it, for the dashboard and 'jobs show'. A job whose id the database
holds already is skipped, never overwritten: running it again restores nothing
twice.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if p.From, p.To, err = vf.bounds(time.Now()); err != nil {
				return err
			}
			if p.Into = vault.RestoreTarget(into); !p.Into.Valid() {
				return usagef("--into: must be queue or archive, got %q", into)
			}
			if p.States, err = restoreStates(states, p.Into); err != nil {
				return err
			}
			if cmd.Flags().Changed("tenant") {
				p.Tenant = &tenant
			}
			if p.Batch < 1 {
				return usagef("--batch: must be at least 1, got %d", p.Batch)
			}
			v, err := vf.open(cmd.Context())
			if err != nil {
				return err
			}
			// A restore writes: like enqueue it makes a database that is not
			// there yet; a dry run writes nothing and makes none.
			open := g.client
			if p.DryRun {
				open = g.existingClient
			}
			c, closeDB, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			bar := newProgress(cmd.ErrOrStderr(), "restoring: read", 0)
			p.Progress = func(r vault.RestoreResult) { bar.update(r.Matched, 0) }
			start := time.Now()
			res, err := vault.Restore(cmd.Context(), c, v, p)
			bar.finish()
			if err != nil {
				return err
			}
			ans := restoreAnswer{Vault: v.String(), Into: into, DryRun: p.DryRun, RestoreResult: res, Seconds: time.Since(start).Seconds()}
			verb := "restored"
			if p.DryRun {
				verb = "dry run: would restore"
			}
			return output(cmd, ans, line("%s %s jobs into the %s from %s (skipped: in the database %s; %s jobs matched)",
				verb, thousands(int64(res.Restored)), into, v, thousands(int64(res.Skipped)), thousands(int64(res.Matched))))
		}}
	vf.add(cmd, "jobs finished at or after this time", "jobs finished before this time")
	f := cmd.Flags()
	f.StringVar(&into, "into", "", "where the jobs go: queue (retried) or archive (as they were); required")
	f.StringSliceVar(&states, "state", nil, "only these states: completed, failed, cancelled (default: all; failed and cancelled --into queue)")
	f.StringVar(&p.Kind, "kind", "", "only this kind")
	f.StringVar(&p.Queue, "queue", "", "only this queue")
	f.StringVar(&tenant, "tenant", "", "only this tenant")
	f.BoolVar(&p.DryRun, "dry-run", false, "count what would be restored; change nothing")
	f.IntVar(&p.Batch, "batch", vault.DefaultRestoreBatch, "jobs written in one transaction")
	return addJSONFlag(cmd)
}

// restoreStates parses --state: finished states only, and no completed job
// into the queue (a completed job is not retried).
func restoreStates(states []string, into vault.RestoreTarget) ([]skiplock.JobState, error) {
	var out []skiplock.JobState
	for _, s := range states {
		st := skiplock.JobState(s)
		if !st.Finished() {
			return nil, usagef("--state: %q is not a finished state (completed, failed, cancelled)", s)
		}
		if st == skiplock.StateCompleted && into == vault.RestoreQueue {
			return nil, usagef("--state: a completed job is not retried; restore it --into archive")
		}
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out, nil
}
