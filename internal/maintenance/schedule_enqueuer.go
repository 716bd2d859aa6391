package maintenance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// ScheduleEnqueuer enqueues the jobs of due recurring schedules (seed 000's
// watchlist). In one transaction it takes the due schedules (locked, so one
// enqueuer takes each), inserts one job per schedule and advances
// next_run_at by Every past now, skipping missed intervals. Each job's key
// schedule:{key}:{next_run_at unix} keeps a retry from doubling it.
type ScheduleEnqueuer struct {
	Store TxStore
	// Params builds the job of a schedule's run (default: its kind, payload,
	// queue and tenant with default priority and retries); the enqueuer sets
	// the idempotency key.
	Params   func(s *driver.Schedule) (*driver.InsertParams, error)
	Interval time.Duration
	Limit    int
	Now      func() time.Time
	Logger   *slog.Logger
	// OnInsert wakes the workers of queues that got jobs.
	OnInsert func(queues []string)
}

// RunOnce enqueues until no schedule is due.
func (s *ScheduleEnqueuer) RunOnce(ctx context.Context) error {
	limit := s.Limit
	if limit <= 0 {
		limit = 500
	}
	for {
		n, queues, err := s.runBatch(ctx, limit)
		if err != nil {
			return err
		}
		if s.OnInsert != nil && len(queues) > 0 {
			s.OnInsert(distinct(queues))
		}
		if n < limit {
			return nil
		}
	}
}

// Run enqueues every Interval (default 1s) until ctx ends.
func (s *ScheduleEnqueuer) Run(ctx context.Context) {
	interval := s.Interval
	if interval <= 0 {
		interval = time.Second
	}
	runEvery(ctx, "schedule enqueuer", interval, orLogger(s.Logger), s.RunOnce)
}

func (s *ScheduleEnqueuer) runBatch(ctx context.Context, limit int) (int, []string, error) {
	tx, err := s.Store.Begin(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	store, err := driver.As[driver.ScheduleStore](tx)
	if err != nil {
		return 0, nil, err
	}
	due, err := store.ScheduleDue(ctx, limit)
	if err != nil {
		return 0, nil, fmt.Errorf("take due schedules: %w", err)
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	var queues []string
	for _, sc := range due {
		q, err := s.enqueueOne(ctx, tx, sc)
		if err != nil {
			return 0, nil, fmt.Errorf("schedule %q (tenant %q): %w", sc.Key, sc.Tenant, err)
		}
		if q != "" {
			queues = append(queues, q)
		}
		if err := store.ScheduleAdvance(ctx, sc.Tenant, sc.Key, NextScheduleRun(sc, now)); err != nil {
			return 0, nil, fmt.Errorf("advance schedule %q: %w", sc.Key, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, nil, err
	}
	return len(due), queues, nil
}

// enqueueOne inserts a schedule's job and answers its queue ("" when the
// key says it exists already, or the job cannot be built: that run is
// skipped, logged, so that one bad schedule never blocks the others).
func (s *ScheduleEnqueuer) enqueueOne(ctx context.Context, tx driver.Executor, sc *driver.Schedule) (string, error) {
	build := s.Params
	if build == nil {
		build = defaultScheduleParams
	}
	p, err := build(sc)
	if err != nil {
		orLogger(s.Logger).Warn("schedule: cannot build its job; run skipped", "schedule", sc.Key,
			"tenant", sc.Tenant, "kind", sc.Kind, "error", err)
		return "", nil
	}
	p.Tenant = sc.Tenant
	p.IdempotencyKey = fmt.Sprintf("schedule:%s:%d", sc.Key, sc.NextRunAt.Unix())
	p.UniquePolicy = "window"
	p.UniqueWindow = max(sc.Every, time.Minute)
	res, err := tx.JobInsertMany(ctx, []*driver.InsertParams{p})
	if err != nil {
		return "", err
	}
	if res[0].Duplicate {
		return "", nil
	}
	orLogger(s.Logger).Debug("schedule enqueued", "schedule", sc.Key, "tenant", sc.Tenant, "job_id", res[0].Job.ID)
	return p.Queue, nil
}

// NextScheduleRun answers the first NextRunAt + k×Every after now (k ≥ 1):
// intervals missed while no server ran are skipped, not enqueued.
func NextScheduleRun(sc *driver.Schedule, now time.Time) time.Time {
	next := sc.NextRunAt.Add(sc.Every)
	if !next.After(now) {
		k := now.Sub(sc.NextRunAt)/sc.Every + 1
		next = sc.NextRunAt.Add(k * sc.Every)
	}
	return next.UTC()
}

func defaultScheduleParams(sc *driver.Schedule) (*driver.InsertParams, error) {
	payload := json.RawMessage(sc.Payload)
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	queue := sc.Queue
	if queue == "" {
		queue = "default"
	}
	return &driver.InsertParams{Kind: sc.Kind, Queue: queue, Tenant: sc.Tenant, Priority: 5, MaxRetries: 3,
		Payload: payload}, nil
}
