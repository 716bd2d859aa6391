package driver

import (
	"context"
	"time"
)

// Process is a process sharing the database: a client that started (a
// worker, or the server external workers claim through).
type Process struct {
	ID      string
	Host    string
	PID     int
	Version string
	// Queues are the queues the client works (none for a server only).
	Queues      []string
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// ProcessStore keeps the processes sharing the database. A client beats
// on its elector's tick and deletes its row at Stop; a row whose heartbeat
// is older than stale belongs to a process that died.
type ProcessStore interface {
	// ProcessBeat records p with the database's clock as its heartbeat
	// (StartedAt kept from its first beat) and deletes the rows older
	// than stale.
	ProcessBeat(ctx context.Context, p *Process, stale time.Duration) error
	ProcessDelete(ctx context.Context, id string) error
	// ProcessList answers the processes that beat within stale, by id.
	//skiplock:read
	//skiplock:replica
	ProcessList(ctx context.Context, stale time.Duration) ([]*Process, error)
}
