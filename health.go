package skiplock

import (
	"context"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/dbwatch"
)

// Refusals: the database answers but takes no writes. A client's errors
// wrap them (a *RefusedError) whatever the call; they last until an
// operator acts, so retrying at once does not help.
var (
	// ErrReadOnly: the database is read-only (a PostgreSQL hot standby or
	// default_transaction_read_only, a read-only SQLite file).
	ErrReadOnly = driver.ErrReadOnly
	// ErrDiskFull: the database has no space left to write.
	ErrDiskFull = driver.ErrDiskFull
)

// RefusedError is a write the database refused: Kind is ErrReadOnly or
// ErrDiskFull, Err the database's own error.
type RefusedError = driver.RefusedError

// WriteProbeInterval is the least time between two probes of WriteHealth.
const WriteProbeInterval = 2 * time.Second

// writeProbeName is the leadership the probe takes: a one-row write that
// touches no job.
const writeProbeName = "write-probe"

// WriteHealth is whether the database takes writes.
type WriteHealth struct {
	// Err is the refusal of the latest write (it wraps ErrReadOnly or
	// ErrDiskFull), nil when the latest write succeeded.
	Err error
	// Since is when writes began to be refused (zero when they are not).
	Since time.Time
}

// writeHealth remembers the outcome of every write the client makes: its
// callers' (the HTTP server's routes too) and its services'.
type writeHealth struct {
	tracker *dbwatch.Tracker
	mu      sync.Mutex // one probe at a time
	probed  time.Time
}

// WriteHealth answers whether the latest write of this client succeeded.
// When no write was seen for WriteProbeInterval, it first makes one of its
// own (at most once per interval), so that the answer holds without
// traffic and turns healthy once the database takes writes again.
func (c *Client) WriteHealth(ctx context.Context) WriteHealth {
	st := c.health.tracker.Status()
	if time.Since(st.At) >= WriteProbeInterval {
		c.probeWrite(ctx)
		st = c.health.tracker.Status()
	}
	return WriteHealth{Err: st.Err, Since: st.Since}
}

// probeWrite writes one row unless a probe ran within the interval; the
// watched driver records the outcome.
func (c *Client) probeWrite(ctx context.Context) {
	h := &c.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.probed) < WriteProbeInterval {
		return
	}
	h.probed = time.Now()
	if _, err := c.driver.LeaderAttempt(ctx, writeProbeName, c.config.ID, time.Millisecond); err != nil {
		c.log.Debug("write probe", "error", err)
	}
}
