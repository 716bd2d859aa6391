package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
)

func newMigrateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "migrate", Short: "Apply, revert or show schema migrations"}
	var upSteps, downSteps int
	run := func(name string) func(*cobra.Command, []string) error {
		steps := &upSteps
		if name == "down" {
			steps = &downSteps
		}
		return func(cmd *cobra.Command, _ []string) error {
			if *steps < 0 {
				return usagef("--steps: must be >= 0, got %d", *steps)
			}
			if name == "down" && *steps == 0 {
				return usagef("--steps: must be at least 1 for down, got 0")
			}
			open := g.open
			if name == "down" {
				open = g.openExisting // nothing to revert in a new file
			}
			db, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			m := db.Driver.Migrator()
			var done []driver.Migration
			switch name {
			case "up":
				// A new SQLite file was migrated as it was opened.
				done, err = m.Up(cmd.Context(), *steps)
				done = append(db.Applied, done...)
			case "down":
				done, err = m.Down(cmd.Context(), *steps)
			}
			if err != nil {
				return err
			}
			key := map[string]string{"up": "applied", "down": "reverted"}[name]
			return output(cmd, map[string]any{key: migrationViews(done)}, func(w io.Writer) error {
				if len(done) == 0 {
					fmt.Fprintf(w, "migrate %s: nothing to do\n", name)
				}
				for _, s := range done {
					fmt.Fprintf(w, "migrate %s: %03d_%s\n", name, s.Version, s.Name)
				}
				return nil
			})
		}
	}
	up := &cobra.Command{Use: "up", Short: "Apply pending migrations (all, or --steps N)", Args: cobra.NoArgs, RunE: run("up")}
	up.Flags().IntVar(&upSteps, "steps", 0, "how many to apply (0: all)")
	down := &cobra.Command{Use: "down", Short: "Revert the newest migration (or --steps N)", Args: cobra.NoArgs, RunE: run("down")}
	down.Flags().IntVar(&downSteps, "steps", 1, "how many to revert")
	status := &cobra.Command{Use: "status", Short: "Show which migrations are applied", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := g.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			all, err := db.Driver.Migrator().Status(cmd.Context())
			if err != nil {
				return err
			}
			return output(cmd, map[string]any{"migrations": migrationViews(all)}, func(w io.Writer) error {
				t := newTable(w, "VERSION", "NAME", "APPLIED")
				for _, s := range all {
					at := "pending"
					if s.Applied != nil {
						at = s.Applied.Format(time.RFC3339)
					}
					t.row(fmt.Sprintf("%03d", s.Version), s.Name, at)
				}
				return t.flush()
			})
		}}
	cmd.AddCommand(addJSONFlag(up), addJSONFlag(down), addJSONFlag(status))
	return cmd
}

// migrationView is a migration in --json: applied_at is null while pending.
type migrationView struct {
	Version   int        `json:"version"`
	Name      string     `json:"name"`
	AppliedAt *time.Time `json:"applied_at"`
}

func migrationViews(ms []driver.Migration) []migrationView {
	out := make([]migrationView, len(ms))
	for i, m := range ms {
		out[i] = migrationView{Version: m.Version, Name: m.Name}
		if m.Applied != nil {
			at := skiplock.ViewTime(*m.Applied)
			out[i].AppliedAt = &at
		}
	}
	return out
}
