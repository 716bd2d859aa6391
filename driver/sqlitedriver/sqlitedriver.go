// Package sqlitedriver runs Skiplock on an embedded SQLite file through
// modernc.org/sqlite (pure Go, no cgo). One writer connection serialises
// every write, claims included, under BEGIN IMMEDIATE; a pool of readers
// serves listings and statistics; wake-ups travel in-process.
package sqlitedriver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/skiplock/skiplock/driver"
)

// Driver is the SQLite driver on one file.
type Driver struct {
	executor
	path    string
	writer  *sql.DB
	readers *sql.DB
	hub     *hub
	stmts   sync.Map // statement name → *sql.Stmt on the writer
	warmed  atomic.Bool
	closed  atomic.Bool
	// wanting counts the writes on their way to the writer; bulk writes
	// give way to them (bulkTx).
	wanting atomic.Int32
	// bulkHeld is how long the last bulk write held the writer, in
	// nanoseconds.
	bulkHeld atomic.Int64
}

// DB is the writer handle: a caller's own transactions (InsertTx) begin
// here, BEGIN IMMEDIATE. While one is open every other write of this
// driver waits for it, so do not call the driver outside the transaction
// before it ends.
func (d *Driver) DB() *sql.DB { return d.writer }

// Path is the absolute path of the database file.
func (d *Driver) Path() string { return d.path }

// Close closes the connections. Safe to call twice.
func (d *Driver) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	releaseHub(d.path)
	return errors.Join(d.readers.Close(), d.writer.Close())
}

func (d *Driver) Name() string { return "sqlite" }

func (d *Driver) Begin(ctx context.Context) (driver.ExecutorTx, error) {
	d.warm(ctx)
	d.wanting.Add(1)
	tx, err := d.writer.BeginTx(ctx, nil)
	d.wanting.Add(-1)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	t := &executorTx{}
	t.executor = executor{d: d, w: tx, r: tx, tx: tx, own: true, after: &t.pending}
	return t, nil
}

// UnwrapTx wraps a *sql.Tx begun on DB(). Wake-ups it sends go out at once:
// a woken worker's claim waits for the writer, so it sees the commit.
func (d *Driver) UnwrapTx(tx any) (driver.Executor, error) {
	t, ok := tx.(*sql.Tx)
	if !ok {
		return nil, fmt.Errorf("sqlitedriver: transaction must be a *sql.Tx from Driver.DB(), got %T", tx)
	}
	return executor{d: d, w: t, r: t, tx: t}, nil
}

func (d *Driver) Migrator() driver.Migrator { return &migrator{d: d} }

func (d *Driver) Notifier() driver.Notifier { return notifier{d.hub} }

// querier is what a *sql.DB and a *sql.Tx both do.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// executor runs statements: writes on w (the writer or a transaction),
// reads on r (the reader pool, or the same transaction).
type executor struct {
	d  *Driver
	w  querier
	r  querier
	tx *sql.Tx
	// own: tx is the driver's own (Begin, inTx), so the cached statements
	// of the writer apply to it.
	own bool
	// after collects wake-ups to send when the driver's transaction commits.
	after *[]string
}

type executorTx struct {
	executor
	pending []string
	done    bool
}

func (t *executorTx) Commit(ctx context.Context) error {
	if err := t.tx.Commit(); err != nil {
		return err
	}
	t.done = true
	if len(t.pending) > 0 {
		t.d.hub.insert(t.pending)
	}
	return nil
}

func (t *executorTx) Rollback(ctx context.Context) error {
	if t.done {
		return nil
	}
	t.done = true
	return t.tx.Rollback()
}

var savepoints atomic.Int64

// inTx runs fn in a write transaction: a new one (BEGIN IMMEDIATE on the
// writer), or a savepoint in the one e runs in.
func (e executor) inTx(ctx context.Context, fn func(e executor) error) error {
	if e.tx != nil {
		name := "sp" + strconv.FormatInt(savepoints.Add(1), 10)
		if _, err := e.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			_, _ = e.tx.ExecContext(ctx, "ROLLBACK TO "+name+"; RELEASE "+name)
			return err
		}
		_, err := e.tx.ExecContext(ctx, "RELEASE "+name)
		return err
	}
	e.d.warm(ctx)
	e.d.wanting.Add(1)
	tx, err := e.d.writer.BeginTx(ctx, nil)
	e.d.wanting.Add(-1)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	var pending []string
	inner := executor{d: e.d, w: tx, r: tx, tx: tx, own: true, after: &pending}
	if err := fn(inner); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if len(pending) > 0 {
		e.d.hub.insert(pending)
	}
	return nil
}

// notify wakes the listeners of queues: at commit inside the driver's own
// transaction, at once otherwise.
func (e executor) notify(queues []string) {
	if len(queues) == 0 {
		return
	}
	if e.after != nil {
		*e.after = append(*e.after, queues...)
		return
	}
	e.d.hub.insert(queues)
}

// prepared answers the writer's prepared statement for name, or nil when
// it is not prepared yet and cannot be now: the writer's one connection is
// busy with e's transaction.
func (e executor) prepared(ctx context.Context, name string) *sql.Stmt {
	if s, ok := e.d.stmts.Load(name); ok {
		return s.(*sql.Stmt)
	}
	if e.tx != nil {
		return nil
	}
	s, err := e.d.writer.PrepareContext(ctx, q(name))
	if err != nil {
		return nil // not migrated yet: run the text and report its error
	}
	if prev, loaded := e.d.stmts.LoadOrStore(name, s); loaded {
		_ = s.Close()
		return prev.(*sql.Stmt)
	}
	return s
}

// warm prepares every statement on the writer before a transaction takes
// its connection, so that transactions run prepared statements too.
func (d *Driver) warm(ctx context.Context) {
	if d.warmed.Load() {
		return
	}
	all := true
	for _, name := range queries.Names() {
		if flowStatements[name] {
			continue // prepared at the first flow claim (warmFlow)
		}
		if (executor{d: d}).prepared(ctx, name) == nil {
			all = false
		}
	}
	d.warmed.Store(all)
}

// stmtFor answers a prepared statement usable where e runs, or nil.
func (e executor) stmtFor(ctx context.Context, name string) *sql.Stmt {
	if e.tx != nil && !e.own {
		return nil
	}
	s := e.prepared(ctx, name)
	if s == nil || e.tx == nil {
		return s
	}
	return e.tx.StmtContext(ctx, s)
}

// wquery runs a statement that writes (or must see this transaction).
func (e executor) wquery(ctx context.Context, name string, args ...any) (*sql.Rows, error) {
	if e.tx == nil {
		e.d.wanting.Add(1)
		defer e.d.wanting.Add(-1)
	}
	args = named(name, args...)
	if s := e.stmtFor(ctx, name); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return e.w.QueryContext(ctx, q(name), args...)
}

func (e executor) wexec(ctx context.Context, name string, args ...any) (sql.Result, error) {
	if e.tx == nil {
		e.d.wanting.Add(1)
		defer e.d.wanting.Add(-1)
	}
	args = named(name, args...)
	if s := e.stmtFor(ctx, name); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return e.w.ExecContext(ctx, q(name), args...)
}

// rquery runs a read on the reader pool (or the transaction).
func (e executor) rquery(ctx context.Context, name string, args ...any) (*sql.Rows, error) {
	return e.r.QueryContext(ctx, q(name), named(name, args...)...)
}

func nowArgs() (int64, sql.NamedArg, sql.NamedArg) {
	n := time.Now().UTC().Truncate(time.Microsecond)
	return n.UnixMicro(), sql.Named("now", n.UnixMicro()), sql.Named("now_text", n.Format(time.RFC3339Nano))
}

func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

var _ driver.Full = executor{}
