package pgdriver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PoolModeParam is the database URL parameter that says a pooler sits
// between Skiplock and PostgreSQL: pool_mode=transaction for PgBouncer (or
// any pooler) in transaction mode, pool_mode=session (the default) for a
// direct connection or a pooler in session mode. Skiplock takes it out of
// the URL; the pooler never sees it.
const PoolModeParam = "pool_mode"

// Options are how Open connects, beyond what the database URL says.
type Options struct {
	// ListenDatabaseURL is a direct connection to the same database, for
	// LISTEN (the one session-level need of Skiplock). Without it LISTEN
	// goes over the pool, except behind a pooler in transaction mode, where
	// it cannot: clients then poll (Config.FetchPollInterval).
	ListenDatabaseURL string
	// Pools splits the process's connections by role, within a budget.
	// Zero: one pool, sized by the URL's pool_max_conns.
	Pools Pools
	// ReadDatabaseURL is a streaming replica that lists, counts and export
	// pages read from (see ReadDatabaseURL); "" reads none.
	ReadDatabaseURL string
	// Logger says when a pool was full; default slog.Default().
	Logger *slog.Logger
}

// Open connects to the database at url (see PoolModeParam) and returns a
// driver that owns its pools; Close closes them.
func Open(ctx context.Context, url string, opts Options) (*Driver, error) {
	cfg, transaction, err := parsePoolURL(url)
	if err != nil {
		return nil, err
	}
	var listen *pgx.ConnConfig
	if opts.ListenDatabaseURL != "" {
		if listen, err = pgx.ParseConfig(opts.ListenDatabaseURL); err != nil {
			return nil, fmt.Errorf("parse listen database url: %w", err)
		}
		if _, ok := listen.RuntimeParams[PoolModeParam]; ok {
			return nil, fmt.Errorf("listen database url: %s: the listen URL must reach PostgreSQL directly, not through a pooler", PoolModeParam)
		}
	}
	sizes, err := opts.Pools.sizes(listen != nil || !transaction)
	if err != nil {
		return nil, err
	}
	replica, err := connectReplica(ctx, options{readURL: opts.ReadDatabaseURL})
	if err != nil {
		return nil, err
	}
	pools, err := openPools(ctx, cfg, sizes)
	if err != nil {
		if replica != nil {
			replica.Close()
		}
		return nil, err
	}
	if listen == nil && sizes.split && !transaction {
		listen = cfg.ConnConfig.Copy() // a slot of its own, outside the pools
	}
	d := New(pools.maintenance).ReadFrom(replica)
	d.notifier.listen, d.notifier.noListen = listen, transaction && listen == nil
	d.routeRoles(pools)
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	d.watch = watchPools(pools, sizes, log)
	return d, nil
}

// parsePoolURL parses url into a pool configuration; behind a pooler in
// transaction mode its statements go unprepared (transaction reports it).
func parsePoolURL(url string) (cfg *pgxpool.Config, transaction bool, err error) {
	cfg, err = pgxpool.ParseConfig(url)
	if err != nil {
		return nil, false, fmt.Errorf("parse database url: %w", err)
	}
	params := cfg.ConnConfig.RuntimeParams
	mode, ok := params[PoolModeParam]
	delete(params, PoolModeParam)
	switch {
	case !ok || mode == "session":
		return cfg, false, nil
	case mode != "transaction":
		return nil, false, fmt.Errorf("parse database url: %s: %q is not transaction or session", PoolModeParam, mode)
	}
	if _, ok := params["search_path"]; ok {
		return nil, false, errors.New("parse database url: search_path: a pooler in transaction mode does not keep it " +
			"(PgBouncer refuses it); set the schema on the role instead: ALTER ROLE name SET search_path = schema")
	}
	// A named prepared statement lives in one server session, which a
	// pooler in transaction mode hands to another client after each
	// transaction: describe each statement once per connection and send
	// it unnamed, so that every execution parses it anew where it runs.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	return cfg, true, nil
}
