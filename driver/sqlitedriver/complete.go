package sqlitedriver

import (
	"context"

	"github.com/skiplock/skiplock/driver"
)

// JobComplete finishes one held job and reads it back in the same
// transaction (the single writer's statements cost no network round trip);
// see driver.JobStore.
func (e executor) JobComplete(ctx context.Context, p driver.CompleteParams) (*driver.Job, error) {
	var out *driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		done, err := tx.JobCompleteMany(ctx, []driver.CompleteParams{p})
		if err != nil {
			return err
		}
		if len(done) == 0 {
			return driver.ErrLeaseLost
		}
		out, err = tx.JobGet(ctx, p.ID)
		return err
	})
	return out, err
}
