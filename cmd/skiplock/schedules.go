package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

func init() { extraCommands = append(extraCommands, newSchedulesCmd) }

func newSchedulesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "schedules", Short: "List, add and remove recurring per-entity schedules"}
	cmd.AddCommand(newSchedulesListCmd(g), newSchedulesAddCmd(g), newSchedulesRemoveCmd(g))
	return cmd
}

func newSchedulesListCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{Use: "list", Short: "List schedules by tenant and key", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, closeDB, err := g.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			var only *string
			if cmd.Flags().Changed("tenant") {
				only = &tenant
			}
			list, err := c.ScheduleList(cmd.Context(), only)
			if err != nil {
				return err
			}
			views := make([]skiplock.ScheduleView, len(list))
			for i, s := range list {
				views[i] = skiplock.NewScheduleView(s)
			}
			return output(cmd, map[string]any{"schedules": views}, func(w io.Writer) error {
				t := newTable(w, "TENANT", "KEY", "KIND", "QUEUE", "EVERY", "NEXT_RUN_AT")
				for _, s := range list {
					t.row(s.Tenant, s.Key, s.Kind, s.Queue, s.Every, s.NextRunAt.Format(time.RFC3339))
				}
				return t.flush()
			})
		}}
	cmd.Flags().StringVar(&tenant, "tenant", "", "only this tenant")
	return addJSONFlag(cmd)
}

func newSchedulesAddCmd(g *globals) *cobra.Command {
	var s skiplock.Schedule
	var payload, nextRunAt string
	cmd := &cobra.Command{Use: "add KEY", Short: "Add or replace the schedule KEY of a tenant",
		Example: `  skiplock schedules add video:abc123 --kind track_video --every 6h --payload '{"video_id":"abc123"}'`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s.Key = args[0]
			f := cmd.Flags()
			if !f.Changed("kind") || s.Kind == "" {
				return usagef("--kind: required")
			}
			if !f.Changed("every") {
				return usagef("--every: required (e.g. 6h, 30m)")
			}
			if s.Every < time.Second {
				return usagef("--every: must be at least 1s, got %s", s.Every)
			}
			s.Payload = json.RawMessage(payload) // checked by the library, as for every caller
			if nextRunAt != "" {
				at, err := time.Parse(time.RFC3339, nextRunAt)
				if err != nil {
					return usagef("--next-run-at: want RFC 3339 (2026-11-21T10:00:00Z): %v", err)
				}
				if at.IsZero() { // to the library the zero time means now
					return usagef("--next-run-at: must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z in UTC, got %q", nextRunAt)
				}
				s.NextRunAt = at
			}
			c, closeDB, err := g.client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			saved, err := c.ScheduleUpsert(cmd.Context(), &s)
			if err != nil {
				return err
			}
			return output(cmd, map[string]any{"schedule": skiplock.NewScheduleView(saved)},
				line("schedule %s: %s every %s, next run %s", saved.Key, saved.Kind, saved.Every,
					saved.NextRunAt.Format(time.RFC3339)))
		}}
	f := cmd.Flags()
	f.StringVar(&s.Kind, "kind", "", "kind of the jobs (required)")
	f.DurationVar(&s.Every, "every", 0, "interval between runs, e.g. 6h (required)")
	f.StringVar(&payload, "payload", "", "JSON payload of each job (default {})")
	f.StringVar(&s.Queue, "queue", skiplock.DefaultQueue, "queue of the jobs")
	f.StringVar(&s.Tenant, "tenant", "", "tenant owning the schedule")
	f.StringVar(&nextRunAt, "next-run-at", "", "first run, RFC 3339, from 1970 to 9999 in UTC (default now)")
	return addJSONFlag(cmd)
}

func newSchedulesRemoveCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{Use: "remove KEY", Short: "Remove a schedule (its jobs stay)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, closeDB, err := g.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			if err := c.ScheduleDelete(cmd.Context(), tenant, args[0]); err != nil {
				return fmt.Errorf("schedule %q (tenant %q): %w", args[0], tenant, err)
			}
			return output(cmd, map[string]any{"deleted": true, "key": args[0], "tenant": tenant},
				line("schedule %s removed", args[0]))
		}}
	cmd.Flags().StringVar(&tenant, "tenant", "", "tenant owning the schedule")
	return addJSONFlag(cmd)
}
