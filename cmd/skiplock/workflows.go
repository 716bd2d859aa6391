package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newWorkflowsCmd) }

func newWorkflowsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "workflows", Short: "Show workflows: the jobs of one workflow id, by stage"}
	var asJSON bool
	show := &cobra.Command{Use: "show ID", Short: "Show a workflow's stages, jobs and overall status",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "" {
				return usagef("ID: must not be empty")
			}
			c, closeDB, err := g.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			v, err := c.Workflow(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), v)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "workflow %s: %s", v.ID, v.Status)
			if v.CurrentStage != "" {
				fmt.Fprintf(out, " (stage %s)", v.CurrentStage)
			}
			fmt.Fprintln(out)
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "STAGE\tJOB\tKIND\tSTATE\tATTEMPT\tPROGRESS\tMESSAGE")
			for _, s := range v.Stages {
				for _, j := range s.Jobs {
					msg := j.ProgressMessage
					if j.LastError != nil && j.State.Finished() && j.State != "completed" {
						msg = *j.LastError
					}
					fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d/%d\t%d%%\t%s\n", s.Name, j.ID, j.Kind, j.State, j.Attempt,
						j.MaxRetries+1, j.Progress, oneLine(msg))
				}
			}
			return w.Flush()
		}}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(show)
	return cmd
}
