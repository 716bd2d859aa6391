package pgdriver

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
)

// Option configures a driver that Connect opens.
type Option func(*options)

type options struct{ readURL string }

// ReadDatabaseURL makes the driver read lists, counts and export pages
// from a streaming replica at url (driver.Replicated); "" reads none.
// Writes, claims and every statement of a transaction stay on the primary.
func ReadDatabaseURL(url string) Option { return func(o *options) { o.readURL = url } }

// connectReplica opens the replica's pool, answering nil when there is none.
func connectReplica(ctx context.Context, o options) (*pgxpool.Pool, error) {
	if o.readURL == "" {
		return nil, nil
	}
	pool, err := openPool(ctx, o.readURL)
	if err != nil {
		return nil, fmt.Errorf("read database url: %w", err)
	}
	return pool, nil
}

// ReadFrom makes d read the replica-safe statements from replica, a pool
// on a streaming replica of d's database that the caller owns, and
// answers d. Call it before d is used.
func (d *Driver) ReadFrom(replica *pgxpool.Pool) *Driver {
	if replica == nil {
		d.replica = nil
		return d
	}
	d.replica = New(replica)
	return d
}

// Replica is the executor on the replica, nil when d reads none.
func (d *Driver) Replica() driver.Executor {
	if d.replica == nil {
		return nil
	}
	return d.replica.executor
}

// ReplicaLag answers how far the database e runs on is behind its primary.
func (e executor) ReplicaLag(ctx context.Context) (driver.ReplicaStatus, error) {
	var st driver.ReplicaStatus
	var secs float64
	if err := e.q.QueryRow(ctx, q("ReplicaLag")).Scan(&st.InRecovery, &secs); err != nil {
		return st, fmt.Errorf("replica lag: %w", err)
	}
	st.Lag = time.Duration(secs * float64(time.Second))
	return st, nil
}

var (
	_ driver.Replicated   = (*Driver)(nil)
	_ driver.ReplicaStore = executor{}
)
