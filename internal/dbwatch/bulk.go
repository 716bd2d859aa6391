package dbwatch

import (
	"context"

	"github.com/skiplock/skiplock/driver"
)

// bulkWrite runs one of BulkStore's set-based actions and records its
// outcome as a write.
func (e executor) bulkWrite(ctx context.Context, ids []int64,
	act func(driver.BulkStore, context.Context, []int64) ([]*driver.Job, error)) ([]*driver.Job, error) {
	st, err := driver.As[driver.BulkStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := act(st, ctx, ids)
	return r, e.write(err)
}

func (e executor) JobCancelMany(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	return e.bulkWrite(ctx, ids, driver.BulkStore.JobCancelMany)
}

func (e executor) JobPauseMany(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	return e.bulkWrite(ctx, ids, driver.BulkStore.JobPauseMany)
}

func (e executor) JobResumeMany(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	return e.bulkWrite(ctx, ids, driver.BulkStore.JobResumeMany)
}

func (e executor) JobRetryMany(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	return e.bulkWrite(ctx, ids, driver.BulkStore.JobRetryMany)
}
