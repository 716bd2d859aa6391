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

func init() { extraCommands = append(extraCommands, newJanitorCmd) }

func newJanitorCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "janitor", Short: "Apply retention to finished jobs, or show the last runs"}
	cmd.AddCommand(newJanitorRunCmd(g), newJanitorStatusCmd(g))
	return cmd
}

func newJanitorRunCmd(g *globals) *cobra.Command {
	var dryRun, force bool
	var configFile string
	var flags serveConfig
	var keep retentionFlags
	cmd := &cobra.Command{Use: "run", Short: "Delete finished jobs past their retention now (docs/retention.md)",
		Long: `Delete finished jobs past their retention now, as the leader does every hour:
expired jobs in bounded batches and, on PostgreSQL, whole day partitions whose
every job expired. The retention comes from the flags, then the retention:
block of ./skiplock.yaml (or --config). --dry-run prints what would go and
deletes nothing; the safety check refuses a run that would delete more than
the configured share of the archive or a job newer than the floor, unless
--force. Every run is recorded (skiplock janitor status).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags.DatabaseURL = g.databaseURL
			cfg, err := loadServeConfig(cmd, flags, configFile)
			if err != nil {
				return err
			}
			keep.apply(cmd, &cfg.Retention)
			return janitorRun(cmd, cfg, skiplock.JanitorOptions{DryRun: dryRun, Force: force})
		}}
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "print what would go and delete nothing")
	f.BoolVar(&force, "force", false, "run past the safety check")
	f.StringVar(&configFile, "config", "", "config file (default ./"+defaultConfigFile+" when it exists)")
	f.StringVar(&flags.Vault, "vault", "", "store finished jobs in this vault before deleting them: a directory or s3://BUCKET/PREFIX")
	addRetentionFlags(cmd, &keep)
	return addJSONFlag(cmd)
}

func janitorRun(cmd *cobra.Command, cfg serveConfig, opts skiplock.JanitorOptions) error {
	ctx := cmd.Context()
	retention, vault, err := cfg.retentionAndVault(ctx)
	if err != nil {
		return err
	}
	g := &globals{databaseURL: cfg.DatabaseURL}
	db, err := g.openExisting(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// This client schedules no run: a retention below the floor is this
	// run's to refuse (or --force), with what it would have deleted.
	retention.Disabled = true
	c, err := skiplock.NewClient(db.Driver, &skiplock.Config{Retention: retention, Vault: vault})
	if err != nil {
		return usagef("%v", err)
	}
	bar := newProgress(cmd.ErrOrStderr(), "purged", 1)
	if !opts.DryRun {
		opts.Progress = func(done, total int64) {
			bar.total = max(total, 1)
			bar.update(int(done), done)
		}
	}
	rep, err := c.JanitorRun(ctx, opts)
	bar.finish()
	if rep == nil || (err != nil && !errors.Is(err, skiplock.ErrJanitorRefused)) {
		return fmt.Errorf("janitor: %w", err)
	}
	if perr := output(cmd, janitorReportView(rep), func(w io.Writer) error { return printReport(w, rep) }); perr != nil {
		return perr
	}
	if err != nil {
		return fmt.Errorf("janitor: %w", err)
	}
	return nil
}

// janitorReportJSON is `skiplock janitor run --json`.
type janitorReportJSON struct {
	Run      server.JanitorRunView `json:"run"`
	Archived int64                 `json:"archived"`
	// ArchivedEstimated: archived counts the recent days, which nothing
	// could expire from, by PostgreSQL's estimate of their rows.
	ArchivedEstimated bool               `json:"archived_estimated"`
	Held              int64              `json:"held"`
	Groups            []janitorGroupJSON `json:"groups"`
	Partitions        []partitionJSON    `json:"partitions"`
	Folds             []foldJSON         `json:"folds"`
}

type janitorGroupJSON struct {
	Day   string            `json:"day"`
	State skiplock.JobState `json:"state"`
	Queue string            `json:"queue"`
	Jobs  int64             `json:"jobs"`
	Bytes int64             `json:"bytes"`
}

type partitionJSON struct {
	Name  string `json:"name"`
	Day   string `json:"day"`
	Bytes int64  `json:"bytes"`
}

// foldJSON is a month whose day partitions were (or would be) merged; name
// is "" in a dry run.
type foldJSON struct {
	Month      string  `json:"month"`
	Name       string  `json:"name"`
	Days       int     `json:"days"`
	Jobs       int64   `json:"jobs"`
	Bytes      int64   `json:"bytes"`
	LockHeldMS float64 `json:"lock_held_ms"`
}

func janitorReportView(rep *skiplock.JanitorReport) janitorReportJSON {
	v := janitorReportJSON{Run: server.NewJanitorRunView(&rep.Run), Archived: rep.Archived,
		ArchivedEstimated: rep.ArchivedEstimated, Held: rep.Held,
		Groups: []janitorGroupJSON{}, Partitions: []partitionJSON{}, Folds: []foldJSON{}}
	for _, g := range rep.Groups {
		v.Groups = append(v.Groups, janitorGroupJSON{Day: g.Day.Format(time.DateOnly), State: g.State,
			Queue: g.Queue, Jobs: g.Jobs, Bytes: g.Bytes})
	}
	for _, p := range rep.Partitions {
		v.Partitions = append(v.Partitions, partitionJSON{Name: p.Name, Day: p.Day.Format(time.DateOnly), Bytes: p.Bytes})
	}
	for _, f := range rep.Folds {
		v.Folds = append(v.Folds, foldJSON{Month: f.Month.Format("2006-01"), Name: f.Name, Days: f.Days, Jobs: f.Jobs,
			Bytes: f.Bytes, LockHeldMS: float64(f.Locked.Microseconds()) / 1000})
	}
	return v
}

func printReport(w io.Writer, rep *skiplock.JanitorReport) error {
	r := rep.Run
	verb, would := "deleted", r.DryRun || r.Outcome == skiplock.JanitorRefused
	if would {
		verb = "would delete"
	}
	if len(rep.Groups) > 0 {
		t := newTable(w, "DAY", "STATE", "QUEUE", "JOBS", "BYTES")
		for _, g := range rep.Groups {
			t.row(g.Day.Format(time.DateOnly), g.State, g.Queue, thousands(g.Jobs), bytesText(g.Bytes))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	for _, p := range rep.Partitions {
		span := p.Day.Format(time.DateOnly)
		if p.End.Sub(p.Day) > 24*time.Hour {
			span = p.Day.Format("2006-01")
		}
		fmt.Fprintf(w, "partition %s (%s, %s): %s\n", p.Name, span, bytesText(p.Bytes),
			map[bool]string{true: "would be dropped", false: "dropped"}[would])
	}
	printFolds(w, rep.Folds, would)
	about := map[bool]string{true: "about "}[rep.ArchivedEstimated]
	fmt.Fprintf(w, "%s %s of %s%s archived jobs (completed %s, failed %s, cancelled %s), %s partitions, about %s",
		verb, thousands(r.Jobs), about, thousands(rep.Archived), thousands(r.ByState[skiplock.StateCompleted]),
		thousands(r.ByState[skiplock.StateFailed]), thousands(r.ByState[skiplock.StateCancelled]), thousands(int64(r.Partitions)),
		bytesText(r.Bytes))
	if rep.Held > 0 {
		fmt.Fprintf(w, "; %s held (a live job depends on them, or their idempotency window is open)", thousands(rep.Held))
	}
	if r.Vaulted > 0 {
		fmt.Fprintf(w, "; %s stored in the vault first", thousands(r.Vaulted))
	}
	_, err := fmt.Fprintf(w, " in %.1f s\n", r.FinishedAt.Sub(r.StartedAt).Seconds())
	return err
}

// printFolds writes a line for each month whose day partitions merge into one.
func printFolds(w io.Writer, folds []skiplock.ArchiveFold, would bool) {
	for _, f := range folds {
		if would {
			fmt.Fprintf(w, "month %s: %d day partitions (%s jobs, %s): would be folded into one\n",
				f.Month.Format("2006-01"), f.Days, thousands(f.Jobs), bytesText(f.Bytes))
			continue
		}
		fmt.Fprintf(w, "month %s: %d day partitions (%s jobs, %s): folded into %s (archive locked %s)\n",
			f.Month.Format("2006-01"), f.Days, thousands(f.Jobs), bytesText(f.Bytes), f.Name,
			f.Locked.Round(time.Millisecond))
	}
}

// bytesText writes n bytes in a unit a person reads: 512 B, 3.1 MB.
func bytesText(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

func newJanitorStatusCmd(g *globals) *cobra.Command {
	var limit int
	cmd := &cobra.Command{Use: "status", Short: "Show the retention and the last janitor runs of any process",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > skiplock.MaxJanitorRuns {
				return usagef("--limit: must be between 1 and %d, got %d", skiplock.MaxJanitorRuns, limit)
			}
			c, closeDB, err := g.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			st, err := server.JanitorStatus(cmd.Context(), c, limit)
			if err != nil {
				return err
			}
			return output(cmd, map[string]any{"runs": st.Runs}, func(w io.Writer) error {
				if len(st.Runs) == 0 {
					_, err := fmt.Fprintln(w, "no janitor runs recorded yet")
					return err
				}
				t := newTable(w, "ID", "FINISHED", "RUNNER", "KIND", "OUTCOME", "JOBS", "PARTITIONS", "BYTES", "DURATION", "MESSAGE")
				for _, r := range st.Runs {
					kind := "run"
					switch {
					case r.DryRun:
						kind = "dry run"
					case r.Forced:
						kind = "forced"
					}
					t.row(r.ID, r.FinishedAt.Format(time.RFC3339), r.Runner, kind, r.Outcome, thousands(r.Jobs),
						r.Partitions, bytesText(r.Bytes), time.Duration(r.DurationSeconds*float64(time.Second)).Round(time.Millisecond),
						r.Message)
				}
				return t.flush()
			})
		}}
	cmd.Flags().IntVar(&limit, "limit", 20, "how many runs, newest first")
	return addJSONFlag(cmd)
}
