package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/dbopen"
	"github.com/skiplock/skiplock/internal/pgrole"
)

// Database is a fresh, migrated Skiplock database of the bench's own: a
// schema skiplock_bench_<rand> on PostgreSQL, a temporary file on SQLite.
type Database struct {
	Driver driver.Driver
	// Kind is "postgres" or "sqlite".
	Kind string
	// URL reaches the bench's schema or file.
	URL string
	// Admin is a connection to the bench's schema (PostgreSQL only).
	Admin *pgx.Conn
	// schema is the bench's schema, and its sessions' application_name;
	// adminURL reaches the database directly.
	schema, adminURL string
	close            func()
}

// OpenFresh makes a fresh database from url (postgres://…, sqlite:PATH, or
// "" for a temporary SQLite file). Close drops it unless keep. listenURL
// is a direct PostgreSQL URL beside a url through a pooler in transaction
// mode (pool_mode=transaction): the bench makes its schema over it, and
// reaches the schema through the pooler as a role of its own. pools split
// the connections by role (PostgreSQL); its sessions, and those of the
// bench's worker processes, carry the schema as their application_name.
func OpenFresh(ctx context.Context, url, listenURL string, keep bool, pools pgdriver.Pools) (*Database, error) {
	if url == "" || url == "sqlite:" {
		dir, err := os.MkdirTemp("", "skiplock-bench-")
		if err != nil {
			return nil, err
		}
		db, err := open(ctx, "sqlite:"+filepath.Join(dir, "bench.db"), dbopen.Options{})
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		inner := db.close
		db.close = func() {
			inner()
			if !keep {
				os.RemoveAll(dir)
			}
		}
		return db, nil
	}
	kind, err := dbopen.Kind(url)
	if err != nil {
		return nil, err
	}
	if kind != "postgres" {
		return open(ctx, url, dbopen.Options{})
	}
	pooled := strings.Contains(url, pgdriver.PoolModeParam+"=transaction")
	adminURL := url
	if pooled {
		if listenURL == "" {
			return nil, fmt.Errorf("listen database url: a database url through a pooler in transaction mode (%s=transaction) needs a direct one beside it, for the bench's schema", pgdriver.PoolModeParam)
		}
		adminURL = listenURL
	}
	admin, err := connectAdmin(ctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	schema := "skiplock_bench_" + randHex(6)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		return nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	var dropRole func(context.Context) error
	drop := func() {
		if !keep {
			_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			if dropRole != nil {
				_ = dropRole(context.Background())
			}
		}
		admin.Close(context.Background())
	}
	openURL, opts := WithSearchPath(url, schema)+"&application_name="+schema, dbopen.Options{Pools: pools}
	if listenURL != "" {
		opts.ListenDatabaseURL = WithSearchPath(listenURL, schema)
	}
	if pooled {
		var role string
		if role, dropRole, err = pgrole.ForSchema(ctx, admin, schema); err == nil {
			openURL, err = pgrole.WithUser(url, role)
			openURL += "&application_name=" + schema
		}
		if err != nil {
			drop()
			return nil, err
		}
	}
	db, err := open(ctx, openURL, opts)
	if err != nil {
		drop()
		return nil, err
	}
	db.schema, db.adminURL = schema, adminURL
	if _, err := admin.Exec(ctx, "SET search_path = "+schema); err != nil {
		db.close()
		drop()
		return nil, err
	}
	db.Admin = admin
	inner := db.close
	db.close = func() { inner(); drop() }
	return db, nil
}

func open(ctx context.Context, url string, opts dbopen.Options) (*Database, error) {
	kind, err := dbopen.Kind(url)
	if err != nil {
		return nil, err
	}
	o, err := dbopen.OpenWith(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if _, err := o.Driver.Migrator().Up(ctx, 0); err != nil {
		o.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return &Database{Driver: o.Driver, Kind: kind, URL: url, close: o.Close}, nil
}

// Close closes the database and drops it unless kept.
func (d *Database) Close() { d.close() }

// TableBytes answers pg_total_relation_size of the hot table and its spill
// tables (0 on SQLite).
func (d *Database) TableBytes(ctx context.Context) (int64, error) {
	if d.Admin == nil {
		return 0, nil
	}
	return tableBytes(ctx, d.Admin)
}

// tableBytes answers pg_total_relation_size of the hot table and its spill
// tables (its children: see docs/hot-path-storage.md). A rebuild
// that replaces the table while the size is read makes it NULL (the name
// led to the table just dropped): the next read finds the new one.
const tableBytesSQL = `SELECT pg_total_relation_size(to_regclass('skiplock_jobs'))
    + coalesce((SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i WHERE i.inhparent = to_regclass('skiplock_jobs')), 0)`

func tableBytes(ctx context.Context, conn *pgx.Conn) (int64, error) {
	for {
		var n *int64
		if err := conn.QueryRow(ctx, tableBytesSQL).Scan(&n); err != nil {
			return 0, err
		}
		if n != nil {
			return *n, nil
		}
	}
}

// DeadTuples answers the hot table's dead tuples as the statistics count
// them (pg_stat_user_tables.n_dead_tup, up to a second behind; 0 on
// SQLite).
func (d *Database) DeadTuples(ctx context.Context) (int64, error) {
	if d.Admin == nil {
		return 0, nil
	}
	var n int64
	err := d.Admin.QueryRow(ctx, "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'skiplock_jobs'::regclass").Scan(&n)
	return n, err
}

// VacuumJobs vacuums and analyses the hot table (PostgreSQL; nothing on
// SQLite). Emptied, the table is then truncated to no pages, and plans made
// next take it for empty.
func (d *Database) VacuumJobs(ctx context.Context) error {
	if d.Admin == nil {
		return nil
	}
	_, err := d.Admin.Exec(ctx, "VACUUM ANALYZE skiplock_jobs")
	return err
}

// HoldSnapshot opens a transaction with a snapshot on a connection of its
// own, so that vacuum cannot remove rows that die after it; release ends it.
// With readsJobs the transaction reads the hot table first, and holds a
// lock on it until it ends.
func HoldSnapshot(ctx context.Context, url string, readsJobs bool) (release func(), err error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		conn.Close(ctx)
		return nil, err
	}
	query := "SELECT 1" // takes the snapshot
	if readsJobs {
		query = "SELECT count(*) FROM skiplock_jobs"
	}
	var n int64
	if err := tx.QueryRow(ctx, query).Scan(&n); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	return func() {
		_ = tx.Rollback(context.Background())
		conn.Close(context.Background())
	}, nil
}

// WithSearchPath adds search_path=schema to a PostgreSQL URL.
func WithSearchPath(url, schema string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
}

// connectAdmin connects to url on one connection: the pool's settings
// (pool_max_conns, …) and pool_mode are the bench's pools', not the
// server's.
func connectAdmin(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	for k := range cfg.RuntimeParams {
		if strings.HasPrefix(k, "pool_") {
			delete(cfg.RuntimeParams, k)
		}
	}
	return pgx.ConnectConfig(ctx, cfg)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// VacuumLoop vacuums the hot table every interval on a connection of its
// own until stop is called.
func VacuumLoop(ctx context.Context, url string, every time.Duration) (stop func(), err error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_, _ = conn.Exec(ctx, "VACUUM skiplock_jobs")
			}
		}
	}()
	return func() {
		cancel()
		<-done
		conn.Close(context.Background())
	}, nil
}
