package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// isConfigError says whether opening the database failed on what the user
// wrote (a URL that does not parse, a listen URL, pools) rather than on the
// database: a usage error.
func isConfigError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"parse database url", "parse listen database url", "listen database url", "pools"} {
		if strings.HasPrefix(msg, p) || strings.Contains(msg, ": "+p) {
			return true
		}
	}
	return false
}

// globals are the flags every command shares.
type globals struct {
	databaseURL string
	// listenDatabaseURL is a direct PostgreSQL URL for LISTEN when
	// databaseURL goes through a pooler in transaction mode.
	listenDatabaseURL string
	// pools split the connections by role (serve's config file).
	pools pgdriver.Pools
	// logger is the command's log, for what the database says (serve's).
	logger *slog.Logger
	// readDatabaseURL is a streaming replica that lists, counts and
	// exports read from (--read-database-url, or SKIPLOCK_READ_DATABASE_URL).
	readDatabaseURL string
	// contracts is a contract file that commands entering jobs enforce
	// (--contracts, or SKIPLOCK_CONTRACTS).
	contracts string
	// contractsWin says which set wins when contracts differs from the
	// stored set (--contracts-win stored|file).
	contractsWin string
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "skiplock",
		Short:         "A durable job queue in the database you already run",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       currentBuild().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().StringVar(&g.databaseURL, "database-url", "",
		"database: postgres://…, sqlite:PATH or PATH.db (env SKIPLOCK_DATABASE_URL; default skiplock.db)")
	root.PersistentFlags().StringVar(&g.listenDatabaseURL, "listen-database-url", "",
		"direct PostgreSQL URL for LISTEN when --database-url goes through PgBouncer in transaction mode (env SKIPLOCK_LISTEN_DATABASE_URL)")
	root.PersistentFlags().StringVar(&g.readDatabaseURL, "read-database-url", "",
		"a streaming replica of a postgres:// database to read lists, counts and exports from (env SKIPLOCK_READ_DATABASE_URL)")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newMigrateCmd(g), newEnqueueCmd(g), newJobsCmd(g), newQueuesCmd(g), newVersionCmd(g))
	for _, add := range extraCommands {
		root.AddCommand(add(g))
	}
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	refuseUnknown(root)
	return root
}

// refuseUnknown makes each command group (skiplock, skiplock jobs, …) refuse
// an unknown subcommand with a usage error and a suggestion; cobra would
// print the group's help and exit 0, so that `skiplock jobs lst` seemed
// to work.
func refuseUnknown(c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	c.Args = cobra.ArbitraryArgs // validated by RunE, with suggestions
	c.SuggestionsMinimumDistance = 2
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			return usagef("unknown command %q for %q; did you mean %q?", args[0], cmd.CommandPath(), s[0])
		}
		return usagef("unknown command %q for %q; see '%s --help'", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	for _, sub := range c.Commands() {
		refuseUnknown(sub)
	}
}

// extraCommands are added by the files that define them (serve, worker, …).
var extraCommands []func(*globals) *cobra.Command

// wrapArgs makes argument-count errors usage errors (exit 2).
func wrapArgs(c *cobra.Command) {
	if c.Args != nil {
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &usageError{err: fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

// url answers the database URL: flag, then environment, then default.
func (g *globals) url() string {
	if g.databaseURL != "" {
		return g.databaseURL
	}
	if u := os.Getenv("SKIPLOCK_DATABASE_URL"); u != "" {
		return u
	}
	return dbopen.DefaultURL
}

// listenURL answers the listen database URL: flag, then environment.
func (g *globals) listenURL() string {
	if g.listenDatabaseURL != "" {
		return g.listenDatabaseURL
	}
	return os.Getenv("SKIPLOCK_LISTEN_DATABASE_URL")
}

// openOptions are what the database opens with beyond its URL.
func (g *globals) openOptions() dbopen.Options {
	return dbopen.Options{ListenDatabaseURL: g.listenURL(), Pools: g.pools, Logger: g.logger}
}

// readURL answers the replica's URL: flag, then environment; "" for none.
func (g *globals) readURL() string {
	if g.readDatabaseURL != "" {
		return g.readDatabaseURL
	}
	return os.Getenv("SKIPLOCK_READ_DATABASE_URL")
}

// open opens the database, creating a SQLite file that does not exist yet;
// a malformed URL is a usage error.
func (g *globals) open(ctx context.Context) (dbopen.Opened, error) {
	return g.openWith(ctx, dbopen.OpenWith)
}

// openExisting opens the database but creates none: for commands that only
// read or act on what is stored, where a new empty file would only hide a
// wrong directory or URL.
func (g *globals) openExisting(ctx context.Context) (dbopen.Opened, error) {
	db, err := g.openWith(ctx, dbopen.OpenExistingWith)
	if errors.Is(err, dbopen.ErrNoDatabase) {
		return db, fmt.Errorf("%w (start one with 'skiplock serve' or 'skiplock migrate up', or pass --database-url)", err)
	}
	return db, err
}

func (g *globals) openWith(ctx context.Context, open func(context.Context, string, dbopen.Options) (dbopen.Opened, error)) (dbopen.Opened, error) {
	url, readURL := g.url(), g.readURL()
	if _, err := dbopen.Kind(url); err != nil {
		return dbopen.Opened{}, &usageError{err: fmt.Errorf("--database-url: %w", err)}
	}
	if err := dbopen.CheckReadURL(url, readURL); err != nil {
		return dbopen.Opened{}, &usageError{err: fmt.Errorf("--read-database-url: %w", err)}
	}
	db, err := open(ctx, url, g.openOptions())
	if err == nil {
		if err = db.ReadFrom(ctx, readURL); err != nil {
			db.Close()
		}
	}
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) || isConfigError(err) {
			return dbopen.Opened{}, &usageError{err: err}
		}
		return dbopen.Opened{}, err
	}
	return db, nil
}

// client opens the database and answers an admin client on it, and what
// closes both.
func (g *globals) client(ctx context.Context) (*skiplock.Client, func(), error) {
	return g.clientOn(ctx, g.open)
}

// existingClient is client on a database that must exist (openExisting).
func (g *globals) existingClient(ctx context.Context) (*skiplock.Client, func(), error) {
	return g.clientOn(ctx, g.openExisting)
}

func (g *globals) clientOn(ctx context.Context, open func(context.Context) (dbopen.Opened, error)) (*skiplock.Client, func(), error) {
	db, err := open(ctx)
	if err != nil {
		return nil, nil, err
	}
	cfg := &skiplock.Config{}
	if path := g.contractsPath(); path != "" {
		if cfg.Contracts, err = loadContracts(path); err != nil {
			db.Close()
			return nil, nil, err
		}
	}
	if cfg.ContractsWin, err = contractsWin(g.contractsWin); err != nil {
		db.Close()
		return nil, nil, err
	}
	if cfg.Flow, err = fileFlowRules(); err != nil {
		db.Close()
		return nil, nil, err
	}
	c, err := skiplock.NewClient(db.Driver, cfg)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	if err := c.LoadContracts(ctx); err != nil && !errors.Is(err, skiplock.ErrNotFound) {
		db.Close()
		return nil, nil, contractsErr(err)
	}
	closeAll := func() {
		// Stop sends the wake-ups of the jobs the command inserted (enqueue,
		// retry, resume): without them workers elsewhere sleep until their
		// next poll. A lost wake-up costs latency, not the job: not an error.
		ctx, cancel := context.WithTimeout(ctx, stopTimeout)
		defer cancel()
		_ = c.Stop(ctx)
		db.Close()
	}
	return c, closeAll, nil
}

// stopTimeout bounds how long a command waits for its wake-ups to go out.
const stopTimeout = 10 * time.Second

func (g *globals) contractsPath() string {
	if g.contracts != "" {
		return g.contracts
	}
	return os.Getenv("SKIPLOCK_CONTRACTS")
}
