package driver

import (
	"context"
	"time"
)

// Replicated is a driver that reads from a streaming replica as well as
// its primary. The library runs on Replica the reads marked
// //skiplock:replica (lists, counts, export pages) made outside a
// transaction; every write, claim and read inside a transaction stays on
// the primary.
type Replicated interface {
	// Replica is the executor on the replica, nil when the driver reads
	// none.
	Replica() Executor
}

// ReplicaStatus is how far a replica is behind its primary.
type ReplicaStatus struct {
	// InRecovery is false when the database is no replica (a primary, or
	// a replica that was promoted): it is then as fresh as the primary.
	InRecovery bool
	// Lag is how old the newest change the replica shows is, zero when it
	// has replayed all it received.
	Lag time.Duration
}

// ReplicaStore answers a replica's lag, on the replica.
type ReplicaStore interface {
	//skiplock:read
	//skiplock:replica
	ReplicaLag(ctx context.Context) (ReplicaStatus, error)
}

// primaryKey marks a context whose reads must see the primary.
type primaryKey struct{}

// WithPrimary answers ctx with its replica-safe reads run on the primary:
// for a read that shows what a write just did (the queue a pause answers).
func WithPrimary(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryKey{}, true)
}

// PrimaryAsked reports whether ctx asks for the primary (WithPrimary).
func PrimaryAsked(ctx context.Context) bool {
	asked, _ := ctx.Value(primaryKey{}).(bool)
	return asked
}
