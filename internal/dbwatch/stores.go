package dbwatch

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// The statements of the stores other than jobs.

func (e executor) QueuePause(ctx context.Context, name string) error {
	st, err := driver.As[driver.AdminStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.QueuePause(ctx, name))
}

func (e executor) QueueResume(ctx context.Context, name string) error {
	st, err := driver.As[driver.AdminStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.QueueResume(ctx, name))
}

// QueueNotify is classified only: a wake-up is no write (PostgreSQL's
// NOTIFY runs on a read-only database).
func (e executor) QueueNotify(ctx context.Context, queues []string) error {
	return e.read(e.Executor.QueueNotify(ctx, queues))
}

func (e executor) QueueList(ctx context.Context, withArchive bool) ([]driver.QueueInfo, error) {
	st, err := driver.As[driver.StatsStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.QueueList(ctx, withArchive)
	return r, e.read(err)
}

func (e executor) LeaderAttempt(ctx context.Context, name, id string, ttl time.Duration) (bool, error) {
	r, err := e.Executor.LeaderAttempt(ctx, name, id, ttl)
	return r, e.write(err)
}

func (e executor) LeaderResign(ctx context.Context, name, id string) error {
	return e.write(e.Executor.LeaderResign(ctx, name, id))
}

func (e executor) ScheduleUpsert(ctx context.Context, s *driver.Schedule) (*driver.Schedule, error) {
	st, err := driver.As[driver.ScheduleStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ScheduleUpsert(ctx, s)
	return r, e.write(err)
}

func (e executor) ScheduleDelete(ctx context.Context, tenant, key string) error {
	st, err := driver.As[driver.ScheduleStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.ScheduleDelete(ctx, tenant, key))
}

func (e executor) ScheduleList(ctx context.Context, tenant *string) ([]*driver.Schedule, error) {
	st, err := driver.As[driver.ScheduleStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ScheduleList(ctx, tenant)
	return r, e.read(err)
}

// ScheduleDue locks the rows it answers, which a read-only database
// refuses like a write.
func (e executor) ScheduleDue(ctx context.Context, limit int) ([]*driver.Schedule, error) {
	st, err := driver.As[driver.ScheduleStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ScheduleDue(ctx, limit)
	return r, e.write(err)
}

func (e executor) ScheduleAdvance(ctx context.Context, tenant, key string, next time.Time) error {
	st, err := driver.As[driver.ScheduleStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.ScheduleAdvance(ctx, tenant, key, next))
}

func (e executor) PeriodicLastTicks(ctx context.Context) (map[string]time.Time, error) {
	st, err := driver.As[driver.PeriodicStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.PeriodicLastTicks(ctx)
	return r, e.read(err)
}

func (e executor) PeriodicAdvance(ctx context.Context, name string, tick time.Time) error {
	st, err := driver.As[driver.PeriodicStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.PeriodicAdvance(ctx, name, tick))
}

func (e executor) HotTableVacuum(ctx context.Context, deadRows int64) (bool, error) {
	st, err := driver.As[driver.HotTableStore](e.Executor)
	if err != nil {
		return false, err
	}
	r, err := st.HotTableVacuum(ctx, deadRows)
	return r, e.write(err)
}

func (e executor) HotTableRebuild(ctx context.Context, limits driver.RebuildLimits) (driver.Rebuild, error) {
	st, err := driver.As[driver.HotTableStore](e.Executor)
	if err != nil {
		return driver.Rebuild{}, err
	}
	r, err := st.HotTableRebuild(ctx, limits)
	return r, e.write(err)
}

func (e executor) HotTableSpill(ctx context.Context, open bool, limits driver.SpillLimits) (driver.Spill, error) {
	st, err := driver.As[driver.HotTableStore](e.Executor)
	if err != nil {
		return driver.Spill{}, err
	}
	r, err := st.HotTableSpill(ctx, open, limits)
	return r, e.write(err)
}

func (e executor) UniqueKeyPrune(ctx context.Context, before time.Time, limit int) (int, error) {
	st, err := driver.As[driver.ArchiveStore](e.Executor)
	if err != nil {
		return 0, err
	}
	n, err := st.UniqueKeyPrune(ctx, before, limit)
	return n, e.write(err)
}

func (e executor) ArchivePrepare(ctx context.Context, until time.Time) error {
	st, err := driver.As[driver.ArchiveStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.ArchivePrepare(ctx, until))
}

func (e executor) TokenCreate(ctx context.Context, t *driver.Token) (*driver.Token, error) {
	st, err := driver.As[driver.TokenStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.TokenCreate(ctx, t)
	return r, e.write(err)
}

func (e executor) TokenByHash(ctx context.Context, hash string) (*driver.Token, error) {
	st, err := driver.As[driver.TokenStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.TokenByHash(ctx, hash)
	return r, e.read(err)
}

func (e executor) TokenList(ctx context.Context) ([]*driver.Token, error) {
	st, err := driver.As[driver.TokenStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.TokenList(ctx)
	return r, e.read(err)
}

func (e executor) TokenDelete(ctx context.Context, id int64) error {
	st, err := driver.As[driver.TokenStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.TokenDelete(ctx, id))
}

func (e executor) TokenCount(ctx context.Context) (int, error) {
	st, err := driver.As[driver.TokenStore](e.Executor)
	if err != nil {
		return 0, err
	}
	r, err := st.TokenCount(ctx)
	return r, e.read(err)
}

func (e executor) QueueExists(ctx context.Context, name string) (bool, error) {
	st, err := driver.As[driver.AdminStore](e.Executor)
	if err != nil {
		return false, err
	}
	r, err := st.QueueExists(ctx, name)
	return r, e.read(err)
}

func (e executor) JobMetrics(ctx context.Context, window time.Duration) (*driver.Metrics, error) {
	st, err := driver.As[driver.MetricsStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobMetrics(ctx, window)
	return r, e.read(err)
}

func (e executor) CounterAdd(ctx context.Context, name string, n int64) error {
	st, err := driver.As[driver.MetricsStore](e.Executor)
	if err != nil {
		return err
	}
	return e.write(st.CounterAdd(ctx, name, n))
}

func (e executor) JobRequestPause(ctx context.Context, id int64) (*driver.Job, error) {
	st, err := driver.As[driver.StopStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobRequestPause(ctx, id)
	return r, e.write(err)
}

func (e executor) JobPauseHeld(ctx context.Context, h driver.HeldJob) (*driver.Job, error) {
	st, err := driver.As[driver.StopStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobPauseHeld(ctx, h)
	return r, e.write(err)
}

func (e executor) JobFail(ctx context.Context, p driver.FailHeldParams) (*driver.Job, error) {
	st, err := driver.As[driver.FailStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobFail(ctx, p)
	return r, e.write(err)
}

func (e executor) JobStopRequests(ctx context.Context, ids []int64) ([]driver.StopRequest, error) {
	st, err := driver.As[driver.StopStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.JobStopRequests(ctx, ids)
	return r, e.read(err)
}

func (e executor) ContractsPut(ctx context.Context, c *driver.StoredContracts) (*driver.StoredContracts, error) {
	st, err := driver.As[driver.ContractStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ContractsPut(ctx, c)
	return r, e.write(err)
}

func (e executor) ContractsCurrent(ctx context.Context) (*driver.StoredContracts, error) {
	st, err := driver.As[driver.ContractStore](e.Executor)
	if err != nil {
		return nil, err
	}
	r, err := st.ContractsCurrent(ctx)
	return r, e.read(err)
}

func (e executor) JobCompleteClaim(ctx context.Context, done []driver.CompleteParams, p driver.ClaimParams) ([]int64, []*driver.Job, error) {
	st, err := driver.As[driver.CompleteClaimStore](e.Executor)
	if err != nil {
		return nil, nil, err
	}
	finished, jobs, err := st.JobCompleteClaim(ctx, done, p)
	return finished, jobs, e.write(err)
}
