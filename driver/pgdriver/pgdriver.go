// Package pgdriver runs Skiplock on PostgreSQL through pgx v5. Claims use
// FOR UPDATE SKIP LOCKED; wake-ups use LISTEN/NOTIFY; finished jobs move to
// an archive partitioned by day.
package pgdriver

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
)

// querier is what both a pool and a transaction can do.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error)
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Driver is the PostgreSQL driver. The caller owns the pool.
type Driver struct {
	executor
	upkeep
	pool     *pgxpool.Pool
	notifier *notifier
	// roles are the pools of claims and completions (pools.go).
	roles roles
	// watch stops the watcher of full pools; nil when none runs.
	watch func()
	// replica reads the replica-safe statements (replica.go); nil: none.
	replica *Driver
	// citus: whether the schema is distributed on Citus (citus.go).
	citus *citusMode
}

// New returns a driver on pool. The schema is the pool's search_path (set
// it with `?search_path=name` in the URL to keep several apart).
func New(pool *pgxpool.Pool) *Driver {
	d := &Driver{pool: pool, notifier: &notifier{pool: pool}, citus: &citusMode{}}
	sp := &hotSpill{read: func(ctx context.Context) (string, error) {
		var t string
		err := pool.QueryRow(ctx, spillTarget).Scan(&t)
		return t, err
	}}
	d.executor = executor{q: pool, n: d.notifier, sp: sp, citus: d.citus, flow: &flowTriggers{pool: pool}}
	d.upkeep = upkeep{executor: d.executor, vac: &hotTableUpkeep{}}
	d.roles = roles{claims: d.executor, completions: d.executor}
	return d
}

// Connect opens a pool for url (and one for the replica of
// ReadDatabaseURL) and returns a driver on it; Close closes them. Open
// takes the rest of Options.
func Connect(ctx context.Context, url string, opts ...Option) (*Driver, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return Open(ctx, url, Options{ReadDatabaseURL: o.readURL})
}

// openPool opens a pool for url and checks that the database answers.
func openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, _, err := parsePoolURL(url)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return pool, nil
}

// Pool is the pool the driver runs on (with Pools, the maintenance pool).
func (d *Driver) Pool() *pgxpool.Pool { return d.pool }

// Close closes the pool (the pools, opened by Open with Pools), and the
// replica's.
func (d *Driver) Close() {
	if d.watch != nil {
		d.watch()
	}
	if d.roles.close != nil {
		d.roles.close()
	}
	d.pool.Close()
	if d.replica != nil {
		d.replica.pool.Close()
	}
}

func (d *Driver) Name() string { return "postgres" }

func (d *Driver) Begin(ctx context.Context) (driver.ExecutorTx, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &executorTx{executor: d.callers(tx), tx: tx}, nil
}

func (d *Driver) UnwrapTx(tx any) (driver.Executor, error) {
	t, ok := tx.(pgx.Tx)
	if !ok {
		return nil, fmt.Errorf("pgdriver: transaction must be a pgx.Tx, got %T", tx)
	}
	return d.callers(t), nil
}

func (d *Driver) Migrator() driver.Migrator { return &migrator{pool: d.pool} }

func (d *Driver) Notifier() driver.Notifier { return d.notifier }

// executor runs the statements on a pool or a transaction.
type executor struct {
	q querier
	n *notifier
	// sp tells where new plain jobs go (spill.go); nil: the hot table,
	// where a caller's transaction (Begin, UnwrapTx) puts them, so that no
	// spill table dropped under it can abort it.
	sp *hotSpill
	// citus: whether the schema is distributed on Citus (citus.go); nil:
	// never asked (a migration's executor).
	citus *citusMode
	// flow: whether the flow triggers are known to be made (flow.go).
	flow *flowTriggers
}

// on answers e running its statements on q, with all it knows.
func (e executor) on(q querier) executor {
	e.q = q
	return e
}

// callers answers e in a caller's transaction (Begin, UnwrapTx): as on, but
// new plain jobs go to the hot table (sp).
func (e executor) callers(tx pgx.Tx) executor {
	e.q, e.sp = tx, nil
	return e
}

type executorTx struct {
	executor
	tx pgx.Tx
}

func (t *executorTx) Commit(ctx context.Context) error   { return t.tx.Commit(ctx) }
func (t *executorTx) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }

// inTx runs fn in a transaction: a new one, or a savepoint in the caller's.
func (e executor) inTx(ctx context.Context, fn func(e executor) error) error {
	return pgx.BeginFunc(ctx, e.q, func(tx pgx.Tx) error { return fn(e.on(tx)) })
}

// hasCode says whether err is PostgreSQL's error of one of codes (SQLSTATE).
func hasCode(err error, codes ...string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && slices.Contains(codes, pgErr.Code)
}

func isUniqueViolation(err error) bool { return hasCode(err, "23505") }

var (
	_ driver.Full          = executor{}
	_ driver.HotTableStore = (*Driver)(nil)
)
