// Package example is what the runnable examples in examples/ share: the
// --database-url flag, a database of their own (a SQLite file in a
// temporary directory, or a fresh PostgreSQL schema dropped at the end),
// a narrated log, and waiting for jobs.
package example

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Env is what an example runs with.
type Env struct {
	Driver driver.Driver
	// Logger is the library's log: discarded unless -v.
	Logger *slog.Logger
}

// Run parses the flags, opens the example's database, runs fn within a
// minute and exits: 0 when fn succeeded, 1 otherwise. Interrupting the
// program cancels fn's context.
func Run(name string, fn func(ctx context.Context, env Env) error) {
	url := flag.String("database-url", "", "PostgreSQL URL (postgres://…); default: a SQLite file in a temporary directory")
	verbose := flag.Bool("v", false, "print the library's log on stderr")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	env := Env{Logger: slog.New(slog.DiscardHandler)}
	if *verbose {
		env.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	drv, where, closeDB, err := Open(ctx, *url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	env.Driver = drv
	Say("%s on %s", name, where)
	err = fn(ctx, env)
	closeDB()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: FAILED: %v\n", name, err)
		os.Exit(1)
	}
	Say("%s: done", name)
}

// Say prints one line of the narrated log.
func Say(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
}
