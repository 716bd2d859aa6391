package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/vault"
)

func init() {
	extraCommands = append(extraCommands, newVaultCmd)
	openVaultAt = func(ctx context.Context, url string) (skiplock.Vault, error) {
		v, err := vault.Open(ctx, url)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

// vaultFlags are the flags every vault command shares.
type vaultFlags struct {
	location string
	from, to string
	// writes: the command may make the vault (export); the others read one
	// that must be there.
	writes bool
}

func newVaultCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "vault", Short: "Export finished jobs to Parquet files and read them back (docs/vault.md)"}
	cmd.AddCommand(newVaultExportCmd(g), newVaultLsCmd(), newVaultQueryCmd(), newVaultMetricsCmd(), newVaultRestoreCmd(g))
	return cmd
}

func (vf *vaultFlags) add(cmd *cobra.Command, fromHelp, toHelp string) {
	f := cmd.Flags()
	f.StringVar(&vf.location, "vault", "", "the vault: a directory, file://PATH or s3://BUCKET/PREFIX?endpoint=… (env SKIPLOCK_VAULT)")
	f.StringVar(&vf.from, "from", "", fromHelp+" (RFC 3339, YYYY-MM-DD, YYYY-MM-DDTHH, or a duration ago: 36h)")
	f.StringVar(&vf.to, "to", "", toHelp)
}

// open opens the vault the flag or SKIPLOCK_VAULT names.
func (vf *vaultFlags) open(ctx context.Context) (*vault.Vault, error) {
	loc := vf.location
	if loc == "" {
		loc = os.Getenv("SKIPLOCK_VAULT")
	}
	if loc == "" {
		return nil, usagef("--vault: required (a directory, file://PATH or s3://BUCKET/PREFIX), or set SKIPLOCK_VAULT")
	}
	// A read needs the vault there; a directory is made by export only.
	if dir, ok := vault.LocalDir(loc); ok && dir != "" {
		st, err := os.Stat(dir)
		switch {
		case err == nil && !st.IsDir():
			return nil, usagef("--vault: %s is not a directory", dir)
		case errors.Is(err, fs.ErrNotExist) && !vf.writes:
			return nil, usagef("--vault: %s does not exist", dir)
		}
	}
	v, err := vault.Open(ctx, loc)
	var bad *vault.LocationError
	if errors.As(err, &bad) {
		return nil, usagef("--vault: %v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("--vault: %w", err)
	}
	return v, nil
}

// openRange parses --from and --to, then opens the vault.
func (vf *vaultFlags) openRange(ctx context.Context) (*vault.Vault, time.Time, time.Time, error) {
	from, to, err := vf.bounds(time.Now())
	if err != nil {
		return nil, from, to, err
	}
	v, err := vf.open(ctx)
	return v, from, to, err
}

// bounds parses --from and --to.
func (vf *vaultFlags) bounds(now time.Time) (from, to time.Time, err error) {
	if from, err = parseWhen("--from", vf.from, now); err != nil {
		return
	}
	if to, err = parseWhen("--to", vf.to, now); err != nil {
		return
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		err = usagef("--to: must be after --from (%s), got %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return
}

// parseWhen reads a time bound: RFC 3339, a date, a date and hour (UTC), or
// a duration before now; "" is no bound.
func parseWhen(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d).UTC(), nil
	}
	return time.Time{}, usagef("%s: %q is not a time (2026-03-01T12:00:00Z, 2026-03-01, 2026-03-01T12, or a duration ago such as 36h)", flag, s)
}

// exportAnswer is the --json form of `vault export`.
type exportAnswer struct {
	Vault   string  `json:"vault"`
	Scanned int     `json:"scanned"`
	Stored  int     `json:"stored"`
	Held    int     `json:"held"`
	Seconds float64 `json:"seconds"`
}

func newVaultExportCmd(g *globals) *cobra.Command {
	vf := vaultFlags{writes: true}
	var batch int
	cmd := &cobra.Command{Use: "export", Short: "Copy finished jobs (by finish time) from the database to the vault", Args: cobra.NoArgs,
		Long: `Copy the finished jobs (completed, failed, cancelled; live and archived) that
finished in [--from, --to) to the vault, leaving them in the database. Jobs the
vault holds already are skipped: an interrupted export is finished by running
it again, and nothing is stored twice.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, to, err := vf.bounds(time.Now())
			if err != nil {
				return err
			}
			if batch < 1 {
				return usagef("--batch: must be at least 1, got %d", batch)
			}
			v, err := vf.open(cmd.Context())
			if err != nil {
				return err
			}
			c, closeDB, err := g.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			const scale = 1_000_000
			bar := newProgress(cmd.ErrOrStderr(), "exporting: read", scale)
			start := time.Now()
			res, err := vault.Export(cmd.Context(), c, v, vault.ExportParams{From: from, To: to, Batch: batch,
				Progress: func(p vault.ExportProgress) { bar.update(p.Scanned, int64(p.Done*scale)) }})
			bar.finish()
			if err != nil {
				return err
			}
			took := time.Since(start)
			ans := exportAnswer{Vault: v.String(), Scanned: res.Scanned, Stored: res.Stored, Held: res.Held, Seconds: took.Seconds()}
			return output(cmd, ans, line("exported %s jobs to %s (%s already there; %s finished jobs read) %s",
				thousands(int64(res.Stored)), v, thousands(int64(res.Held)), thousands(int64(res.Scanned)), rateLine(res.Scanned, took)))
		}}
	vf.add(cmd, "jobs finished at or after this time", "jobs finished before this time (default: no bound)")
	cmd.Flags().IntVar(&batch, "batch", vault.DefaultExportBatch, "jobs stored at a time: the most one file holds")
	return addJSONFlag(cmd)
}

// partAnswer is one part in the --json form of `vault ls`.
type partAnswer struct {
	Hour    time.Time `json:"hour"`
	Rows    int       `json:"rows"`
	Bytes   int64     `json:"bytes"`
	MinID   int64     `json:"min_id"`
	MaxID   int64     `json:"max_id"`
	Jobs    string    `json:"jobs"`
	Metrics string    `json:"metrics"`
}

func newVaultLsCmd() *cobra.Command {
	var vf vaultFlags
	cmd := &cobra.Command{Use: "ls", Short: "List the vault's files: hour, jobs, bytes, ids", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, from, to, err := vf.openRange(cmd.Context())
			if err != nil {
				return err
			}
			parts, err := v.Parts(cmd.Context(), from, to)
			if err != nil {
				return err
			}
			ans := struct {
				Vault string       `json:"vault"`
				Parts []partAnswer `json:"parts"`
			}{Vault: v.String(), Parts: []partAnswer{}}
			var rows int
			var bytes int64
			for _, p := range parts {
				ans.Parts = append(ans.Parts, partAnswer{Hour: p.Hour, Rows: p.Rows, Bytes: p.Bytes, MinID: p.MinID(),
					MaxID: p.MaxID(), Jobs: p.Jobs, Metrics: p.Metrics})
				rows += p.Rows
				bytes += p.Bytes
			}
			return output(cmd, ans, func(w io.Writer) error {
				t := newTable(w, "HOUR", "JOBS", "BYTES", "IDS", "FILE")
				for _, p := range parts {
					t.row(p.Hour.Format("2006-01-02T15Z"), p.Rows, p.Bytes, fmt.Sprintf("%d-%d", p.MinID(), p.MaxID()), p.Jobs)
				}
				if err := t.flush(); err != nil {
					return err
				}
				_, err := fmt.Fprintf(w, "%s files, %s jobs, %s bytes in %s\n", thousands(int64(len(parts))), thousands(int64(rows)), thousands(bytes), v)
				return err
			})
		}}
	vf.add(cmd, "hours that end after this time", "hours that start before this time")
	return addJSONFlag(cmd)
}

func newVaultQueryCmd() *cobra.Command {
	var (
		vf     vaultFlags
		q      vault.QueryParams
		states []string
		tenant string
	)
	cmd := &cobra.Command{Use: "query", Short: "List jobs from the vault, by finish time", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if q.From, q.To, err = vf.bounds(time.Now()); err != nil {
				return err
			}
			for _, s := range states {
				st := skiplock.JobState(s)
				if st != skiplock.StateCompleted && st != skiplock.StateFailed && st != skiplock.StateCancelled {
					return usagef("--state: %q is not a finished state (completed, failed, cancelled)", s)
				}
				q.States = append(q.States, st)
			}
			if cmd.Flags().Changed("tenant") {
				q.Tenant = &tenant
			}
			if q.Limit < 0 {
				return usagef("--limit: must not be negative, got %d", q.Limit)
			}
			v, err := vf.open(cmd.Context())
			if err != nil {
				return err
			}
			jobs := []*skiplock.JobView{}
			if err := v.Query(cmd.Context(), q, func(j *skiplock.JobRow) error {
				jobs = append(jobs, skiplock.NewJobView(j))
				return nil
			}); err != nil {
				return err
			}
			ans := struct {
				Jobs []*skiplock.JobView `json:"jobs"`
			}{jobs}
			return output(cmd, ans, func(w io.Writer) error {
				t := newTable(w, "ID", "KIND", "QUEUE", "STATE", "ATTEMPT", "FINISHED_AT", "RUN")
				for _, j := range jobs {
					run := "-"
					if j.StartedAt != nil {
						run = j.FinishedAt.Sub(*j.StartedAt).Round(time.Millisecond).String()
					}
					t.row(j.ID, j.Kind, j.Queue, j.State, attemptCell(j.Attempt, j.MaxRetries),
						j.FinishedAt.Format(time.RFC3339), run)
				}
				return t.flush()
			})
		}}
	vf.add(cmd, "jobs finished at or after this time", "jobs finished before this time")
	f := cmd.Flags()
	f.StringSliceVar(&states, "state", nil, "only these states: completed, failed, cancelled (repeatable or comma-separated)")
	f.StringVar(&q.Kind, "kind", "", "only this kind")
	f.StringVar(&q.Queue, "queue", "", "only this queue")
	f.StringVar(&tenant, "tenant", "", "only this tenant")
	f.IntVar(&q.Limit, "limit", 100, "at most this many (0: all)")
	return addJSONFlag(cmd)
}

func newVaultMetricsCmd() *cobra.Command {
	var vf vaultFlags
	cmd := &cobra.Command{Use: "metrics", Short: "Show the vault's hourly queue metrics: jobs by final state, run times", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, from, to, err := vf.openRange(cmd.Context())
			if err != nil {
				return err
			}
			ms, err := v.Metrics(cmd.Context(), from, to)
			if err != nil {
				return err
			}
			type row struct {
				Hour      time.Time `json:"hour"`
				Queue     string    `json:"queue"`
				Jobs      int64     `json:"jobs"`
				Completed int64     `json:"completed"`
				Failed    int64     `json:"failed"`
				Cancelled int64     `json:"cancelled"`
				RunMeanMs float64   `json:"run_mean_ms"`
				RunP95Ms  float64   `json:"run_p95_ms"`
			}
			ans := struct {
				Metrics []row `json:"metrics"`
			}{Metrics: []row{}}
			for _, m := range ms {
				ans.Metrics = append(ans.Metrics, row{m.Hour, m.Queue, m.Jobs, m.Completed, m.Failed, m.Cancelled, m.RunMeanMs, m.RunP95Ms})
			}
			return output(cmd, ans, func(w io.Writer) error {
				t := newTable(w, "HOUR", "QUEUE", "JOBS", "COMPLETED", "FAILED", "CANCELLED", "RUN_MEAN", "RUN_P95")
				for _, m := range ms {
					t.row(m.Hour.Format("2006-01-02T15Z"), m.Queue, m.Jobs, m.Completed, m.Failed, m.Cancelled,
						msText(m.Runs, m.RunMeanMs), msText(m.Runs, m.RunP95Ms))
				}
				return t.flush()
			})
		}}
	vf.add(cmd, "hours that end after this time", "hours that start before this time")
	return addJSONFlag(cmd)
}

// msText shows a run time, "-" when no job ran.
func msText(runs int64, ms float64) string {
	if runs == 0 {
		return "-"
	}
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond).String()
}
