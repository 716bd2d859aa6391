package dbwatch

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// The janitor's statements.

func (e executor) ArchiveSummary(ctx context.Context, now time.Time) ([]driver.ArchiveGroup, error) {
	r, err := e.Executor.ArchiveSummary(ctx, now)
	return r, e.read(err)
}

func (e executor) ArchiveCountBefore(ctx context.Context, g driver.ArchiveGroup, before, now time.Time) (driver.ArchiveGroup, error) {
	r, err := e.Executor.ArchiveCountBefore(ctx, g, before, now)
	return r, e.read(err)
}

func (e executor) ArchivePartitions(ctx context.Context) ([]driver.ArchivePartition, error) {
	r, err := e.Executor.ArchivePartitions(ctx)
	return r, e.read(err)
}

func (e executor) ArchiveExpired(ctx context.Context, p driver.ExpiredParams) ([]driver.ArchivedRef, error) {
	r, err := e.Executor.ArchiveExpired(ctx, p)
	return r, e.read(err)
}

func (e executor) ArchiveJobs(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	r, err := e.Executor.ArchiveJobs(ctx, ids)
	return r, e.read(err)
}

func (e executor) ArchiveDelete(ctx context.Context, ids []int64, from, to, now time.Time) ([]int64, error) {
	r, err := e.Executor.ArchiveDelete(ctx, ids, from, to, now)
	return r, e.write(err)
}

func (e executor) ArchiveDropPartition(ctx context.Context, name string, now time.Time) error {
	return e.write(e.Executor.ArchiveDropPartition(ctx, name, now))
}

func (e executor) JanitorRunSave(ctx context.Context, r *driver.JanitorRun) (int64, error) {
	id, err := e.Executor.JanitorRunSave(ctx, r)
	return id, e.write(err)
}

func (e executor) JanitorRunList(ctx context.Context, limit int) ([]*driver.JanitorRun, error) {
	r, err := e.Executor.JanitorRunList(ctx, limit)
	return r, e.read(err)
}
