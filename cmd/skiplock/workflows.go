package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock/server"
)

func init() { extraCommands = append(extraCommands, newWorkflowsCmd) }

func newWorkflowsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "workflows", Short: "Show workflows: the jobs of one workflow id, by stage"}
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
			v, err := server.LoadWorkflow(cmd.Context(), c, args[0], nil)
			if err != nil {
				return err
			}
			return output(cmd, v, func(w io.Writer) error { return printWorkflow(w, v) })
		}}
	cmd.AddCommand(addJSONFlag(show))
	return cmd
}

// printWorkflow is the human form of a workflow: a summary line, then a
// table of its jobs by stage.
func printWorkflow(w io.Writer, v *server.WorkflowAnswer) error {
	fmt.Fprintf(w, "workflow %s: %s", v.WorkflowID, v.State)
	if v.CurrentStage != "" {
		fmt.Fprintf(w, " (stage %s)", v.CurrentStage)
	}
	fmt.Fprintln(w)
	t := newTable(w, "STAGE", "JOB", "KIND", "STATE", "ATTEMPT", "PROGRESS", "MESSAGE")
	for _, s := range v.Stages {
		for _, j := range s.Jobs {
			msg := j.ProgressMessage
			if j.LastError != nil && j.State.Finished() && j.State != "completed" {
				msg = *j.LastError
			}
			t.row(s.Name, j.ID, j.Kind, j.State, attemptCell(j.Attempt, j.MaxRetries),
				fmt.Sprintf("%d%%", j.Progress), msg)
		}
	}
	return t.flush()
}
