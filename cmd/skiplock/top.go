package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

func init() { extraCommands = append(extraCommands, newTopCmd) }

// topOptions are the flags of `skiplock top`.
type topOptions struct {
	interval time.Duration
	once     bool
	running  int
	failures int
}

// DefaultTopInterval is how often `skiplock top` redraws.
const DefaultTopInterval = 2 * time.Second

// maxTopRows bounds --running and --failures: a screen shows no more.
const maxTopRows = 1000

func newTopCmd(g *globals) *cobra.Command {
	var o topOptions
	cmd := &cobra.Command{Use: "top", Short: "Watch queues, rates, failures and running jobs in the terminal", Args: cobra.NoArgs,
		Long: "Watch queues, rates, failures and running jobs, redrawn in place every --interval until Ctrl-C.\n" +
			"With --once, or when stdout is not a terminal, print one snapshot and exit.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			c, closeDB, err := g.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			w := cmd.OutOrStdout()
			if o.once || !isTTY(w) {
				o.once = true
				snap, err := loadTop(cmd.Context(), c, o)
				if err != nil {
					return err
				}
				return snap.render(w, o)
			}
			return watchTop(cmd.Context(), c, o, w)
		}}
	f := cmd.Flags()
	f.DurationVar(&o.interval, "interval", DefaultTopInterval, "time between refreshes, e.g. 1s, 5s")
	f.BoolVar(&o.once, "once", false, "print one snapshot and exit")
	f.IntVar(&o.running, "running", 20, "running jobs to show, newest first")
	f.IntVar(&o.failures, "failures", 5, "failed jobs to show, newest first")
	return cmd
}

func (o *topOptions) validate() error {
	if o.interval < 100*time.Millisecond {
		return usagef("--interval: must be at least 100ms, got %s", o.interval)
	}
	if o.running < 0 || o.running > maxTopRows {
		return usagef("--running: must be between 0 and %d, got %d", maxTopRows, o.running)
	}
	if o.failures < 0 || o.failures > maxTopRows {
		return usagef("--failures: must be between 0 and %d, got %d", maxTopRows, o.failures)
	}
	return nil
}

// ANSI sequences of the in-place redraw: home, clear to end of line and of
// screen, hide and show the cursor. Overwriting line by line, instead of
// clearing the screen first, keeps the picture from flickering.
const (
	ansiHome       = "\x1b[H"
	ansiClearLine  = "\x1b[K"
	ansiClearBelow = "\x1b[J"
	ansiHideCursor = "\x1b[?25l"
	ansiShowCursor = "\x1b[?25h"
)

// watchTop redraws a snapshot every o.interval until ctx ends (Ctrl-C: main
// cancels ctx). A failed read is shown above the last snapshot and retried
// at the next tick: a database restart does not end the watch.
func watchTop(ctx context.Context, c *skiplock.Client, o topOptions, w io.Writer) error {
	fmt.Fprint(w, "\x1b[2J"+ansiHideCursor)
	defer fmt.Fprint(w, ansiShowCursor+"\n")
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	var last *topSnapshot
	for {
		snap, err := loadTop(ctx, c, o)
		if ctx.Err() != nil {
			return nil
		}
		var screen bytes.Buffer
		if err != nil {
			fmt.Fprintf(&screen, "refresh failed at %s: %s\n", time.Now().UTC().Format(time.TimeOnly), oneLine(err.Error()))
			snap = last
		}
		if snap != nil {
			if err := snap.render(&screen, o); err != nil {
				return err
			}
			last = snap
		}
		fmt.Fprint(w, ansiHome+strings.ReplaceAll(screen.String(), "\n", ansiClearLine+"\n")+ansiClearBelow)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// topSnapshot is what one refresh of `skiplock top` read.
type topSnapshot struct {
	at       time.Time
	database string
	queues   []skiplock.QueueInfo
	minute   *skiplock.Activity
	running  []*skiplock.JobRow
	failures []*skiplock.JobRow
}

// loadTop reads a snapshot with the library's own listings: the queues with
// their archived counts (failed), the last minute's activity, and the
// newest running and failed jobs.
func loadTop(ctx context.Context, c *skiplock.Client, o topOptions) (*topSnapshot, error) {
	s := &topSnapshot{at: time.Now(), database: c.Database()}
	var err error
	if s.queues, err = c.QueueList(ctx, true); err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	if s.minute, err = c.Activity(ctx, time.Minute, time.Second); err != nil {
		return nil, fmt.Errorf("read activity: %w", err)
	}
	if o.running > 0 {
		if s.running, err = c.JobList(ctx, skiplock.JobListParams{States: []skiplock.JobState{skiplock.StateRunning}, Limit: o.running}); err != nil {
			return nil, fmt.Errorf("list running jobs: %w", err)
		}
	}
	if o.failures > 0 {
		if s.failures, err = c.JobList(ctx, skiplock.JobListParams{States: []skiplock.JobState{skiplock.StateFailed}, Limit: o.failures}); err != nil {
			return nil, fmt.Errorf("list failed jobs: %w", err)
		}
	}
	return s, nil
}

// render writes the snapshot: a summary line, the queues, the running jobs
// and the newest failures.
func (s *topSnapshot) render(w io.Writer, o topOptions) error {
	fmt.Fprintf(w, "skiplock top · %s · %s", s.database, s.at.UTC().Format("2006-01-02 15:04:05 MST"))
	if !o.once {
		fmt.Fprintf(w, " · every %s · Ctrl-C quits", o.interval)
	}
	fmt.Fprintln(w)
	t := s.minute.Totals()
	secs := s.at.Sub(s.minute.Since).Seconds()
	fmt.Fprintf(w, "last minute: %d completed (%.2f/s), %d failed (%.2f/s), %d cancelled · %s on %s\n\n",
		t.Completed, perSecond(t.Completed, secs), t.Failed, perSecond(t.Failed, secs), t.Cancelled,
		countNoun(s.minute.Running, "job running", "jobs running"), countNoun(s.minute.RunningWorkers, "worker", "workers"))
	if len(s.queues) == 0 {
		_, err := fmt.Fprintln(w, "no queues and no jobs yet: enqueue one with 'skiplock enqueue KIND'")
		return err
	}
	if err := s.renderQueues(w); err != nil {
		return err
	}
	if o.running > 0 {
		if err := s.renderRunning(w); err != nil {
			return err
		}
	}
	if o.failures > 0 {
		return s.renderFailures(w)
	}
	return nil
}

func (s *topSnapshot) renderQueues(w io.Writer) error {
	tb := newTable(w, "QUEUE", "PAUSED", "PENDING", "SCHEDULED", "RUNNING", "FAILED", "OLDEST_PENDING")
	for _, q := range s.queues {
		paused := "no"
		if q.Paused {
			paused = "yes"
		}
		oldest := "-"
		if q.Counts[skiplock.StatePending] > 0 {
			oldest = q.OldestPendingAge.Round(time.Second).String()
		}
		tb.row(q.Name, paused, q.Counts[skiplock.StatePending], q.Counts[skiplock.StateScheduled],
			q.Counts[skiplock.StateRunning], q.Counts[skiplock.StateFailed], oldest)
	}
	return tb.flush()
}

func (s *topSnapshot) renderRunning(w io.Writer) error {
	fmt.Fprintln(w, "\nRUNNING (newest first)")
	if len(s.running) == 0 {
		_, err := fmt.Fprintln(w, "none")
		return err
	}
	tb := newTable(w, "ID", "KIND", "QUEUE", "WORKER", "PROGRESS", "RUNNING_FOR")
	for _, j := range s.running {
		progress := fmt.Sprintf("%d%%", j.Progress)
		if j.ProgressMessage != "" {
			progress += " " + clipRunes(j.ProgressMessage, 40)
		}
		runningFor := "-"
		if j.StartedAt != nil {
			runningFor = s.at.Sub(*j.StartedAt).Round(time.Second).String()
		}
		tb.row(j.ID, j.Kind, j.Queue, j.WorkerID, progress, runningFor)
	}
	return tb.flush()
}

func (s *topSnapshot) renderFailures(w io.Writer) error {
	fmt.Fprintln(w, "\nFAILURES (newest first)")
	if len(s.failures) == 0 {
		_, err := fmt.Fprintln(w, "none")
		return err
	}
	tb := newTable(w, "ID", "KIND", "QUEUE", "FAILED_AGO", "ERROR")
	for _, j := range s.failures {
		ago := "-"
		if j.FinishedAt != nil {
			ago = s.at.Sub(*j.FinishedAt).Round(time.Second).String()
		}
		errText := "-"
		if n := len(j.Errors); n > 0 {
			last := j.Errors[n-1]
			errText = clipRunes(strings.TrimPrefix(last.Type+": "+last.Message, ": "), 80)
		}
		tb.row(j.ID, j.Kind, j.Queue, ago, errText)
	}
	return tb.flush()
}

// countNoun answers "1 worker", "2 workers": n with the word that agrees.
func countNoun(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// perSecond answers n over secs, zero for no time.
func perSecond(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// clipRunes cuts s to at most n runes, marking the cut with an ellipsis.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
