package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/dbopen"
)

func newMigrateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "migrate", Short: "Apply, revert or show schema migrations"}
	var upSteps, downSteps int
	var citus bool
	var citusShards int
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
			if name == "up" && citus && *steps != 0 {
				return usagef("--citus: distributes the whole schema, so it takes no --steps (got %d)", *steps)
			}
			if name == "up" && (citusShards < 0 || citusShards > 4096) {
				return usagef("--citus-shards: must be between 0 and 4096, got %d", citusShards)
			}
			if name == "up" && citusShards != 0 && !citus {
				return usagef("--citus-shards: only with --citus")
			}
			if name == "up" && citus {
				if kind, err := dbopen.Kind(g.url()); err == nil && kind != "postgres" {
					return usagef("--citus: needs a PostgreSQL database with the citus extension, got %s (--database-url)", kind)
				}
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
			view := map[string]any{key: migrationViews(done)}
			distributed := ""
			if name == "up" && citus {
				if distributed, err = distributeOnCitus(cmd, db.Driver, citusShards); err != nil {
					return err
				}
				view["citus"] = distributed
			}
			return output(cmd, view, func(w io.Writer) error {
				if len(done) == 0 {
					fmt.Fprintf(w, "migrate %s: nothing to do\n", name)
				}
				for _, s := range done {
					fmt.Fprintf(w, "migrate %s: %03d_%s\n", name, s.Version, s.Name)
				}
				if distributed != "" {
					fmt.Fprintf(w, "migrate %s: citus: %s\n", name, distributed)
				}
				return nil
			})
		}
	}
	up := &cobra.Command{Use: "up", Short: "Apply pending migrations (all, or --steps N)", Args: cobra.NoArgs, RunE: run("up")}
	up.Flags().IntVar(&upSteps, "steps", 0, "how many to apply (0: all)")
	up.Flags().BoolVar(&citus, "citus", false, "then distribute the schema on Citus: jobs and archive by queue (PostgreSQL with the citus extension; docs/scale.md)")
	up.Flags().IntVar(&citusShards, "citus-shards", 0, "with --citus: shards of the jobs and the archive (0: Citus's citus.shard_count, 32 unless set)")
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
	cmd.AddCommand(addJSONFlag(up), addJSONFlag(down), addJSONFlag(status), newFilterIndexesCmd(g))
	return cmd
}

// distributeOnCitus distributes a migrated PostgreSQL schema on Citus and
// answers what it did: "distributed" or "already distributed".
func distributeOnCitus(cmd *cobra.Command, d driver.Driver, shards int) (string, error) {
	pg, ok := d.(*pgdriver.Driver)
	if !ok {
		return "", usagef("--citus: needs a PostgreSQL database with the citus extension, got %s", d.Name())
	}
	done, err := pg.Distribute(cmd.Context(), pgdriver.CitusOptions{Shards: shards})
	if err != nil {
		return "", err
	}
	if !done {
		return "already distributed", nil
	}
	return "distributed", nil
}

// newFilterIndexesCmd adds (or drops) the archive's optional listing-filter
// indexes on PostgreSQL.
func newFilterIndexesCmd(g *globals) *cobra.Command {
	var drop, payload bool
	cmd := &cobra.Command{Use: "filter-indexes", Args: cobra.NoArgs,
		Short: "Add the archive's indexes for listing by tag, metadata, error type, worker and created time (PostgreSQL)",
		Long: `Add the archive's indexes for listing by tag, metadata, error type, worker and
created time (PostgreSQL). Every completion pays an entry in each, so a new
database has none; listings with these filters read the archive newest first
until the page is full. The indexes are built partition by partition with
CREATE INDEX CONCURRENTLY, so workers keep completing jobs meanwhile; run it
again after an interruption and it goes on where it stopped. --payload adds
the payload's index too (jobs list --payload, GET /v1/jobs?payload=): a
payload is most of a job's bytes, so it is left out unless asked for. --drop
removes them all. On SQLite there is nothing to add: the worker and created
filters have their indexes, and JSON text cannot be indexed.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := g.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			pg, ok := db.Driver.(*pgdriver.Driver)
			if !ok {
				fmt.Fprintln(cmd.OutOrStdout(), "filter-indexes: nothing to do on SQLite (the worker and created filters have their indexes already)")
				return nil
			}
			if drop {
				if err := pg.DropFilterIndexes(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "filter-indexes: dropped")
				return nil
			}
			n := 0
			built := func(index, partition string) {
				n++
				if isTTY(cmd.ErrOrStderr()) {
					fmt.Fprintf(cmd.ErrOrStderr(), "\r\033[Kbuilt %s on %s", index, partition)
				}
			}
			err = pg.AddFilterIndexes(cmd.Context(), built)
			if err == nil && payload {
				err = pg.AddPayloadIndex(cmd.Context(), built)
			}
			if n > 0 && isTTY(cmd.ErrOrStderr()) {
				fmt.Fprint(cmd.ErrOrStderr(), "\r\033[K")
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "filter-indexes: valid (%d partition indexes built)\n", n)
			return nil
		}}
	cmd.Flags().BoolVar(&drop, "drop", false, "remove the indexes (the payload's too)")
	cmd.Flags().BoolVar(&payload, "payload", false, "also add the payload's index, for listing by payload")
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
