package dbwatch

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// The janitor's statements.

func (e executor) ArchiveSummary(ctx context.Context, now, until time.Time) (driver.ArchiveSummary, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return driver.ArchiveSummary{}, err
	}
	r, err := st.ArchiveSummary(ctx, now, until)
	return r, e.read(err)
}

func (e executor) ArchiveCountBefore(ctx context.Context, g driver.ArchiveGroup, before, now time.Time) (driver.ArchiveGroup, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return driver.ArchiveGroup{}, err
	}
	r, err := st.ArchiveCountBefore(ctx, g, before, now)
	return r, e.read(err)
}

func (e executor) ArchivePartitions(ctx context.Context) ([]driver.ArchivePartition, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ArchivePartitions(ctx)
	return r, e.read(err)
}

func (e executor) ArchiveExpired(ctx context.Context, p driver.ExpiredParams) ([]driver.ArchivedRef, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ArchiveExpired(ctx, p)
	return r, e.read(err)
}

func (e executor) ArchiveJobs(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ArchiveJobs(ctx, ids)
	return r, e.read(err)
}

func (e executor) ArchiveRange(ctx context.Context, p driver.RangeParams) ([]*driver.Job, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ArchiveRange(ctx, p)
	return r, e.read(err)
}

func (e executor) ArchiveDelete(ctx context.Context, jobs []driver.ArchivedRef, from, to, now time.Time) ([]int64, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ArchiveDelete(ctx, jobs, from, to, now)
	return r, e.write(err)
}

func (e executor) ArchiveDropPartition(ctx context.Context, name string, now time.Time) error {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.ArchiveDropPartition(ctx, name, now))
}

func (e executor) ArchiveFoldMonth(ctx context.Context, month time.Time, maxJobs int64) (driver.ArchiveFold, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return driver.ArchiveFold{}, err
	}
	f, err := st.ArchiveFoldMonth(ctx, month, maxJobs)
	return f, e.write(err)
}

func (e executor) JanitorRunSave(ctx context.Context, r *driver.JanitorRun) (int64, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return 0, err
	}
	id, err := st.JanitorRunSave(ctx, r)
	return id, e.write(err)
}

func (e executor) JanitorRunList(ctx context.Context, limit int) ([]*driver.JanitorRun, error) {
	st, err := driver.As[driver.RetentionStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JanitorRunList(ctx, limit)
	return r, e.read(err)
}
