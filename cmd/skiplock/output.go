package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/attempts"
)

// Every command that prints data prints it one of two ways: a human form (an
// aligned table, or one line for an action) or, with --json, the machine form
// docs/cli.md lists, the same JSON the HTTP API answers where it has one.

// addJSONFlag gives cmd the --json flag that output reads.
func addJSONFlag(cmd *cobra.Command) *cobra.Command {
	cmd.Flags().Bool("json", false, "print JSON (the shapes are in docs/cli.md)")
	return cmd
}

// output prints v as JSON when cmd's --json is set, else the human form.
func output(cmd *cobra.Command, v any, human func(w io.Writer) error) error {
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		return printJSON(cmd.OutOrStdout(), v)
	}
	return human(cmd.OutOrStdout())
}

// line is a human form of one line: what an action did.
func line(format string, args ...any) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := fmt.Fprintf(w, format+"\n", args...)
		return err
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes rows in aligned columns under a header.
type table struct{ w *tabwriter.Writer }

func newTable(w io.Writer, header ...any) *table {
	t := &table{w: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...any) {
	for i, c := range cells {
		if i > 0 {
			fmt.Fprint(t.w, "\t")
		}
		// A tab or newline inside a cell would break the columns.
		fmt.Fprint(t.w, strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(fmt.Sprint(c)))
	}
	fmt.Fprintln(t.w)
}

func (t *table) flush() error { return t.w.Flush() }

// jobView is a job as docs/api.md shows it: optional fields are null when unset.
func jobView(j *skiplock.JobRow) *skiplock.JobView {
	return skiplock.NewJobView(j)
}

// jobAnswer is the API's answer about one job: {"job": …}.
type jobAnswer struct {
	Job       *skiplock.JobView `json:"job"`
	Duplicate bool              `json:"duplicate,omitempty"`
}

// attemptText says where a job stands: "pending (next attempt 1 of 4)",
// "failed (attempt 4 of 4)"; 4 is max_retries + 1, the runs allowed.
func attemptText(j *skiplock.JobRow) string {
	return attempts.Text(j.State, j.Attempt, j.MaxRetries)
}

// attemptCell is a table's attempt column: attempts made / runs allowed.
func attemptCell(attempt, maxRetries int) string {
	return fmt.Sprintf("%d/%d", attempt, attempts.Allowed(maxRetries))
}

// jobDetail is the human form of one job: a field per line, aligned.
func jobDetail(j *skiplock.JobRow) func(io.Writer) error {
	return func(w io.Writer) error {
		v := jobView(j)
		t := newTable(w, "id", v.ID)
		t.row("kind", v.Kind)
		t.row("queue", v.Queue)
		t.row("state", attemptText(j))
		t.row("priority", v.Priority)
		for _, f := range []struct {
			name string
			val  *string
		}{{"op", v.Op}, {"tenant", &v.Tenant}, {"workflow", v.WorkflowID}, {"stage", v.Stage},
			{"idempotency key", v.IdempotencyKey}, {"worker", v.WorkerID}} {
			if f.val != nil && *f.val != "" {
				t.row(f.name, oneLine(*f.val))
			}
		}
		t.row("run at", v.RunAt.Format(time.RFC3339))
		t.row("created at", v.CreatedAt.Format(time.RFC3339))
		if v.FinishedAt != nil {
			t.row("finished at", v.FinishedAt.Format(time.RFC3339))
		}
		if v.ProgressMessage != "" || v.Progress > 0 {
			t.row("progress", strings.TrimSpace(fmt.Sprintf("%d%% %s", v.Progress, oneLine(v.ProgressMessage))))
		}
		t.row("payload", oneLine(string(v.Payload)))
		if len(v.Result) > 0 && string(v.Result) != "null" {
			t.row("result", oneLine(string(v.Result)))
		}
		t.row("max retries", fmt.Sprintf("%d (runs allowed: %d)", v.MaxRetries, attempts.Allowed(v.MaxRetries)))
		if n := len(v.Errors); n > 0 {
			t.row("last error", fmt.Sprintf("%s (attempt %d: %s)", oneLine(v.Errors[n-1].Message), v.Errors[n-1].Attempt, attempts.End(v, n-1)))
		}
		return t.flush()
	}
}
