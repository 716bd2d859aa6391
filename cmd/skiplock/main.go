// Command skiplock runs and administers Skiplock: serve, migrate, enqueue,
// jobs, queues and more. Bad input exits 2 with one line on stderr.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/dbopen"
)

func main() {
	if code, ok := guardMain(os.Args[1:]); ok {
		os.Exit(code) // this process guards a `skiplock worker` job's command
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

// run executes the command line and answers the exit code: 0 done, 1 a
// failure of the system (database down), 2 bad input.
func run(ctx context.Context, args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	msg := oneLine(err.Error())
	if unmigrated(msg) {
		msg += " (the database lacks Skiplock's tables: run 'skiplock migrate up')"
	}
	if wantsJSON(cmd, args) {
		writeJSONError(os.Stderr, err, msg)
	} else {
		fmt.Fprintln(os.Stderr, "skiplock: "+msg)
		var ex *excerptError
		if errors.As(err, &ex) {
			fmt.Fprint(os.Stderr, ex.excerpt) // the lines of the input at fault
		}
	}
	if isInputError(err) {
		return 2
	}
	return 1
}

// unmigrated tells an error of a table of Skiplock's that is not there
// (SQLite: "no such table: skiplock_…"; PostgreSQL: relation "skiplock_…"
// does not exist), as after `migrate down` of every step.
func unmigrated(msg string) bool {
	// A spill table dropped under a statement is not a missing schema.
	return !strings.Contains(msg, "skiplock_jobs_spill_") && (strings.Contains(msg, "no such table: skiplock_") ||
		(strings.Contains(msg, `relation "skiplock_`) && strings.Contains(msg, "does not exist")))
}

// usageError is bad input on the command line.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

func isInputError(err error) bool {
	var ue *usageError
	var ve *skiplock.ValidationError
	return errors.As(err, &ue) || errors.As(err, &ve) || errors.Is(err, skiplock.ErrNotFound) ||
		errors.Is(err, skiplock.ErrWrongState) || errors.Is(err, skiplock.ErrMissingDependency) || errors.Is(err, dbopen.ErrBadDatabase)
}

func oneLine(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}
