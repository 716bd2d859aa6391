package sqlitedriver

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Query answers a statement of queries.sql, expanded, for tests that look
// at its plan.
func Query(name string) string { return q(name) }

// JobListArgs are the parameters JobList runs its statement with.
func JobListArgs(p driver.ListParams) ([]any, error) { return jobListArgs(p) }

// The driver's tests check the arguments of every call against the names
// its statement uses.
func init() { checkArgs = true }

// Wanting is the count of writes on their way to the writer.
func Wanting(d *Driver) *atomic.Int32 { return &d.wanting }

// GiveWay is a bulk write's wait before its transaction.
func GiveWay(ctx context.Context, d *Driver, most time.Duration) { d.giveWay(ctx, most) }

// BulkHeld is how long the last bulk write held the writer, in nanoseconds.
func BulkHeld(d *Driver) *atomic.Int64 { return &d.bulkHeld }
