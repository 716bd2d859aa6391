package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/skiplock/skiplock/driver"
)

// TxStore runs statements and opens transactions: a driver.Driver.
type TxStore interface {
	driver.Executor
	Begin(ctx context.Context) (driver.ExecutorTx, error)
}

// CronSchedule answers the first tick strictly after t.
type CronSchedule interface {
	Next(t time.Time) time.Time
}

// ParseCron parses a cron expression: five standard fields, a descriptor
// (@hourly, @daily, …), or @every <duration> (at least 1s); a CRON_TZ=
// prefix sets the time zone (UTC otherwise). @every ticks are aligned to the
// Unix epoch so that every server computes the same ticks.
func ParseCron(spec string) (CronSchedule, error) {
	spec = strings.TrimSpace(spec)
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return nil, fmt.Errorf("@every: %w", err)
		}
		if d < time.Second {
			return nil, fmt.Errorf("@every: must be at least 1s, got %s", d)
		}
		return everySchedule{d: d}, nil
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, err
	}
	return utcSchedule{s}, nil
}

type everySchedule struct{ d time.Duration }

func (s everySchedule) Next(t time.Time) time.Time {
	n := t.UnixNano() / int64(s.d)
	if t.UnixNano() < 0 && t.UnixNano()%int64(s.d) != 0 {
		n--
	}
	return time.Unix(0, (n+1)*int64(s.d)).UTC()
}

// utcSchedule evaluates a cron spec in UTC unless it names a CRON_TZ.
type utcSchedule struct{ s cron.Schedule }

func (u utcSchedule) Next(t time.Time) time.Time { return u.s.Next(t.UTC()).UTC() }

// PeriodicEntry is one periodic job.
type PeriodicEntry struct {
	Name     string
	Schedule CronSchedule
	// CatchUp enqueues the most recent tick missed while no server ran;
	// otherwise missed ticks are skipped.
	CatchUp bool
	// Params builds the job of one tick; the enqueuer sets its idempotency
	// key to periodic:{name}:{tick unix}.
	Params func(tick time.Time) (*driver.InsertParams, error)
}

// Defaults of a PeriodicEnqueuer.
const (
	DefaultPeriodicInterval = time.Second
	DefaultPeriodicGrace    = time.Minute
	defaultPeriodicMaxTicks = 100
)

// PeriodicEnqueuer enqueues the ticks of cron schedules. It runs on the
// leader only, and each tick's job carries the key periodic:{name}:{tick},
// kept for a window longer than any chance to enqueue it twice, so that even
// two leaders in a split brain insert one job per tick. The last tick of
// each entry lives in the database (driver.PeriodicStore) and survives
// restarts.
type PeriodicEnqueuer struct {
	Store   TxStore
	Entries []PeriodicEntry
	// Interval between checks (default 1s).
	Interval time.Duration
	// Grace: a tick older than this when the leader first sees it was missed
	// while no server ran (default 1 min; keep it above a leader failover).
	Grace  time.Duration
	Now    func() time.Time
	Logger *slog.Logger
	// OnInsert wakes the workers of queues that got jobs.
	OnInsert func(queues []string)

	// last is the fallback memory of ticks when the driver keeps none.
	last map[string]time.Time
}

// RunOnce enqueues every due tick of every entry.
func (p *PeriodicEnqueuer) RunOnce(ctx context.Context) error {
	now := time.Now()
	if p.Now != nil {
		now = p.Now()
	}
	if p.last == nil {
		p.last = map[string]time.Time{}
	}
	last := p.last
	if ps, err := driver.As[driver.PeriodicStore](p.Store); err == nil {
		var err error
		if last, err = ps.PeriodicLastTicks(ctx); err != nil {
			return fmt.Errorf("read last periodic ticks: %w", err)
		}
	}
	var errs []error
	for _, e := range p.Entries {
		if err := p.runEntry(ctx, e, last, now.UTC()); err != nil {
			errs = append(errs, fmt.Errorf("periodic job %q: %w", e.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Run checks every Interval until ctx ends.
func (p *PeriodicEnqueuer) Run(ctx context.Context) {
	interval := p.Interval
	if interval <= 0 {
		interval = DefaultPeriodicInterval
	}
	runEvery(ctx, "periodic", interval, orLogger(p.Logger), p.RunOnce)
}

func (p *PeriodicEnqueuer) grace() time.Duration {
	if p.Grace > 0 {
		return p.Grace
	}
	return DefaultPeriodicGrace
}

func (p *PeriodicEnqueuer) runEntry(ctx context.Context, e PeriodicEntry, last map[string]time.Time, now time.Time) error {
	prev, seen := last[e.Name]
	if !seen {
		// First sight: ticks count from now on.
		return p.record(ctx, p.Store, e.Name, now)
	}
	ticks, skipped := dueTicks(e, prev, now, p.grace())
	if !skipped.IsZero() {
		orLogger(p.Logger).Info("periodic job: skipped ticks missed while no server ran",
			"periodic_job", e.Name, "after", prev, "up_to", skipped)
	}
	if len(ticks) == 0 {
		if !skipped.IsZero() {
			return p.record(ctx, p.Store, e.Name, skipped)
		}
		return nil
	}
	queues, err := p.enqueue(ctx, e, ticks)
	if err != nil {
		return err
	}
	if p.OnInsert != nil && len(queues) > 0 {
		p.OnInsert(distinct(queues))
	}
	return nil
}

// enqueue inserts the ticks' jobs and records the last tick in one
// transaction.
func (p *PeriodicEnqueuer) enqueue(ctx context.Context, e PeriodicEntry, ticks []time.Time) ([]string, error) {
	tx, err := p.Store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var queues []string
	for _, tick := range ticks {
		params, err := e.Params(tick)
		if err != nil {
			return nil, fmt.Errorf("build job of tick %s: %w", tick.Format(time.RFC3339), err)
		}
		params.IdempotencyKey = fmt.Sprintf("periodic:%s:%d", e.Name, tick.Unix())
		params.UniquePolicy = "window"
		params.UniqueWindow = 2 * max(p.grace(), e.Schedule.Next(tick).Sub(tick))
		res, err := tx.JobInsertMany(ctx, []*driver.InsertParams{params})
		if err != nil {
			return nil, fmt.Errorf("insert job of tick %s: %w", tick.Format(time.RFC3339), err)
		}
		if !res[0].Duplicate {
			queues = append(queues, params.Queue)
			orLogger(p.Logger).Debug("periodic job enqueued", "periodic_job", e.Name, "tick", tick, "job_id", res[0].Job.ID)
		}
	}
	if err := p.record(ctx, tx, e.Name, ticks[len(ticks)-1]); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	p.last[e.Name] = ticks[len(ticks)-1]
	return queues, nil
}

func (p *PeriodicEnqueuer) record(ctx context.Context, exec driver.Executor, name string, tick time.Time) error {
	if ps, err := driver.As[driver.PeriodicStore](exec); err == nil {
		if err := ps.PeriodicAdvance(ctx, name, tick); err != nil {
			return fmt.Errorf("record last tick: %w", err)
		}
	}
	if _, inTx := exec.(driver.ExecutorTx); !inTx && tick.After(p.last[name]) {
		p.last[name] = tick
	}
	return nil
}

// dueTicks answers the ticks after prev up to now to enqueue, and the newest
// missed tick it skipped (zero if none). Ticks due within grace are enqueued;
// older ones were missed while no server ran: the newest of them is enqueued
// with CatchUp, skipped otherwise.
func dueTicks(e PeriodicEntry, prev, now time.Time, grace time.Duration) (ticks []time.Time, skipped time.Time) {
	from, cutoff := prev, now.Add(-grace)
	if prev.Before(cutoff) {
		if missed := latestTick(e.Schedule, prev, cutoff); !missed.IsZero() {
			if e.CatchUp {
				ticks = append(ticks, missed)
			} else {
				skipped = missed
			}
		}
		from = cutoff
	}
	for t := e.Schedule.Next(from); !t.After(now) && len(ticks) < defaultPeriodicMaxTicks; t = e.Schedule.Next(t) {
		ticks = append(ticks, t)
	}
	return ticks, skipped
}

// latestTick answers the newest tick in (after, upTo], or zero. It searches
// back from upTo in widening spans so that a long outage costs few steps.
func latestTick(s CronSchedule, after, upTo time.Time) time.Time {
	spans := []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 366 * 24 * time.Hour}
	for i := 0; ; i++ {
		start := after
		if i < len(spans) && upTo.Add(-spans[i]).After(after) {
			start = upTo.Add(-spans[i])
		}
		var last time.Time
		for t, n := s.Next(start), 0; !t.After(upTo) && n < 1_000_000; t, n = s.Next(t), n+1 {
			last = t
		}
		if !last.IsZero() || start.Equal(after) {
			return last
		}
	}
}
