package skiplock

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// ReadsReplica reports whether the client reads lists, counts and export
// pages from a streaming replica (a driver connected with one, such as
// pgdriver.ReadDatabaseURL). Writes, claims and JobGet always see the
// primary.
func (c *Client) ReadsReplica() bool { return c.driver.ReadsReplica() }

// ReplicaLag answers how far the replica the client reads from is behind
// its primary: how old the newest change it shows is, zero when it has
// replayed all it received (or is no replica). ok is false when the client
// reads no replica: every read then sees the primary.
func (c *Client) ReplicaLag(ctx context.Context) (lag time.Duration, ok bool, err error) {
	if !c.driver.ReadsReplica() {
		return 0, false, nil
	}
	st, err := c.driver.ReplicaLag(ctx)
	if err != nil {
		return 0, true, err
	}
	return st.Lag, true, nil
}

// ReadPrimary answers ctx with the client's reads run on the primary even
// when it reads a replica: for a read that must show what a write just did.
func ReadPrimary(ctx context.Context) context.Context { return driver.WithPrimary(ctx) }
