package dbwatch

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// The statements of the stores other than jobs.

func (e executor) QueuePause(ctx context.Context, name string) error {
	return e.write(e.Executor.QueuePause(ctx, name))
}

func (e executor) QueueResume(ctx context.Context, name string) error {
	return e.write(e.Executor.QueueResume(ctx, name))
}

// QueueNotify is classified only: a wake-up is no write (PostgreSQL's
// NOTIFY runs on a read-only database).
func (e executor) QueueNotify(ctx context.Context, queues []string) error {
	return e.read(e.Executor.QueueNotify(ctx, queues))
}

func (e executor) QueueList(ctx context.Context, withArchive bool) ([]driver.QueueInfo, error) {
	r, err := e.Executor.QueueList(ctx, withArchive)
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
	r, err := e.Executor.ScheduleUpsert(ctx, s)
	return r, e.write(err)
}

func (e executor) ScheduleDelete(ctx context.Context, tenant, key string) error {
	return e.write(e.Executor.ScheduleDelete(ctx, tenant, key))
}

func (e executor) ScheduleList(ctx context.Context, tenant *string) ([]*driver.Schedule, error) {
	r, err := e.Executor.ScheduleList(ctx, tenant)
	return r, e.read(err)
}

// ScheduleDue locks the rows it answers, which a read-only database
// refuses like a write.
func (e executor) ScheduleDue(ctx context.Context, limit int) ([]*driver.Schedule, error) {
	r, err := e.Executor.ScheduleDue(ctx, limit)
	return r, e.write(err)
}

func (e executor) ScheduleAdvance(ctx context.Context, tenant, key string, next time.Time) error {
	return e.write(e.Executor.ScheduleAdvance(ctx, tenant, key, next))
}

func (e executor) PeriodicLastTicks(ctx context.Context) (map[string]time.Time, error) {
	r, err := e.Executor.PeriodicLastTicks(ctx)
	return r, e.read(err)
}

func (e executor) PeriodicAdvance(ctx context.Context, name string, tick time.Time) error {
	return e.write(e.Executor.PeriodicAdvance(ctx, name, tick))
}

func (e executor) HotTableVacuum(ctx context.Context, deadRows int64) (bool, error) {
	r, err := e.Executor.HotTableVacuum(ctx, deadRows)
	return r, e.write(err)
}

func (e executor) UniqueKeyPrune(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := e.Executor.UniqueKeyPrune(ctx, before, limit)
	return n, e.write(err)
}

func (e executor) ArchivePrepare(ctx context.Context, until time.Time) error {
	return e.write(e.Executor.ArchivePrepare(ctx, until))
}

func (e executor) TokenCreate(ctx context.Context, t *driver.Token) (*driver.Token, error) {
	r, err := e.Executor.TokenCreate(ctx, t)
	return r, e.write(err)
}

func (e executor) TokenByHash(ctx context.Context, hash string) (*driver.Token, error) {
	r, err := e.Executor.TokenByHash(ctx, hash)
	return r, e.read(err)
}

func (e executor) TokenList(ctx context.Context) ([]*driver.Token, error) {
	r, err := e.Executor.TokenList(ctx)
	return r, e.read(err)
}

func (e executor) TokenDelete(ctx context.Context, id int64) error {
	return e.write(e.Executor.TokenDelete(ctx, id))
}

func (e executor) TokenCount(ctx context.Context) (int, error) {
	r, err := e.Executor.TokenCount(ctx)
	return r, e.read(err)
}
