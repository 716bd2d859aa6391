package pgdriver

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
)

// Pools are the database connections of one process by role, within a
// budget. Each role has a pool of its own, so that a role whose pool is
// full waits on itself only: completions never hold up claims.
type Pools struct {
	// Claims serve claims: a client's workers and the HTTP workers' claims
	// (default: a share of the budget, or DefaultClaimConns).
	Claims int
	// Completions serve what ends or extends a held job: completions,
	// failures, retries, heartbeats, progress (default as Claims).
	Completions int
	// Maintenance serves everything else: inserts, the API's reads and
	// writes, the maintenance services, migrations (default: a fifth of
	// the budget, or DefaultMaintenanceConns).
	Maintenance int
	// Budget is the most connections the process opens: the three pools
	// and the listener, which holds one connection while it listens.
	// Zero: no limit but the pools' sizes.
	Budget int
}

// Defaults of Pools without a Budget.
const (
	DefaultClaimConns       = 4
	DefaultCompletionConns  = 4
	DefaultMaintenanceConns = 2
)

// PoolsError is a Pools that cannot work: Field is the size at fault
// (budget, claims, completions or maintenance), for a command to name it
// as its user gave it (a flag, a variable, a file key).
type PoolsError struct {
	Field, Problem string
}

func (e *PoolsError) Error() string { return "pools." + e.Field + ": " + e.Problem }

// Check answers the error Open would answer for these pools on url with
// listenURL, without connecting: for a command to refuse its configuration
// before it starts.
func (p Pools) Check(url, listenURL string) error {
	_, transaction, err := parsePoolURL(url)
	if err != nil {
		return err
	}
	_, err = p.sizes(listenURL != "" || !transaction)
	return err
}

// poolSizes are the pools' sizes once defaulted; split is false when the
// process runs on one pool.
type poolSizes struct {
	claims, completions, maintenance, listener int
	split                                      bool
}

// sizes checks p and fills its defaults; listens says whether a listener
// will hold a connection of its own.
func (p Pools) sizes(listens bool) (poolSizes, error) {
	if p == (Pools{}) {
		return poolSizes{}, nil
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"claims", p.Claims}, {"completions", p.Completions}, {"maintenance", p.Maintenance}, {"budget", p.Budget}} {
		if f.n < 0 {
			return poolSizes{}, &PoolsError{Field: f.name, Problem: fmt.Sprintf("must be 0 (the default) or more, got %d", f.n)}
		}
	}
	s := poolSizes{claims: p.Claims, completions: p.Completions, maintenance: p.Maintenance, split: true}
	if listens {
		s.listener = 1
	}
	if p.Budget == 0 {
		s.claims = or(s.claims, DefaultClaimConns)
		s.completions = or(s.completions, DefaultCompletionConns)
		s.maintenance = or(s.maintenance, DefaultMaintenanceConns)
		return s, nil
	}
	rest := p.Budget - s.listener - s.claims - s.completions - s.maintenance
	if s.maintenance == 0 && rest > 0 {
		s.maintenance = max(1, rest/5)
		rest -= s.maintenance
	}
	switch {
	case s.claims == 0 && s.completions == 0 && rest > 1:
		s.claims = rest / 2
		s.completions = rest - s.claims
	case s.claims == 0 && rest > 0:
		s.claims = rest
	case s.completions == 0 && rest > 0:
		s.completions = rest
	}
	if s.claims == 0 || s.completions == 0 || s.maintenance == 0 || s.total() > p.Budget {
		return poolSizes{}, &PoolsError{Field: "budget", Problem: fmt.Sprintf("%d connections do not hold claims %s + completions %s + maintenance %s + listener %d; "+
			"raise the budget or lower the pools (each needs at least 1)", p.Budget,
			sizeOf(p.Claims, s.claims), sizeOf(p.Completions, s.completions), sizeOf(p.Maintenance, s.maintenance), s.listener)}
	}
	return s, nil
}

func (s poolSizes) total() int { return s.claims + s.completions + s.maintenance + s.listener }

func or(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// sizeOf shows a pool's size as asked, or "(at least 1)" when left to the budget.
func sizeOf(asked, got int) string {
	if asked == 0 && got == 0 {
		return "(at least 1)"
	}
	return fmt.Sprint(max(asked, got))
}

// rolePools are the pools of a process; without a split, all three are one.
type rolePools struct {
	claims, completions, maintenance *pgxpool.Pool
}

// openPools opens the pools s asks for on cfg: one when s is not split.
func openPools(ctx context.Context, cfg *pgxpool.Config, s poolSizes) (rolePools, error) {
	open := func(size int) (*pgxpool.Pool, error) {
		c := cfg.Copy()
		if size > 0 {
			c.MaxConns = int32(size)
			c.MinConns = 0
		}
		pool, err := pgxpool.NewWithConfig(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("connect to postgres: %w", err)
		}
		if err := pool.Ping(ctx); err != nil {
			pool.Close()
			return nil, fmt.Errorf("connect to postgres: %w", err)
		}
		return pool, nil
	}
	main, err := open(s.maintenance)
	if err != nil || !s.split {
		return rolePools{main, main, main}, err
	}
	claims, err := open(s.claims)
	if err != nil {
		main.Close()
		return rolePools{}, err
	}
	completions, err := open(s.completions)
	if err != nil {
		main.Close()
		claims.Close()
		return rolePools{}, err
	}
	return rolePools{claims, completions, main}, nil
}

// roles are the executors of claims and completions; on one pool both are
// the driver's own.
type roles struct {
	claims, completions executor
	close               func()
}

// routeRoles sends claims and completions to their pools.
func (d *Driver) routeRoles(p rolePools) {
	d.roles.claims = d.executor.on(p.claims)
	d.roles.completions = d.executor.on(p.completions)
	if p.claims != p.maintenance {
		d.roles.close = func() {
			p.claims.Close()
			p.completions.Close()
		}
	}
}

func (d *Driver) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	return d.roles.claims.JobClaim(ctx, p)
}

func (d *Driver) JobCompleteClaim(ctx context.Context, done []driver.CompleteParams, p driver.ClaimParams) ([]driver.CompletedJob, []*driver.Job, error) {
	return d.roles.claims.JobCompleteClaim(ctx, done, p)
}

func (d *Driver) JobComplete(ctx context.Context, p driver.CompleteParams) (*driver.Job, error) {
	return d.roles.completions.JobComplete(ctx, p)
}

func (d *Driver) JobCompleteMany(ctx context.Context, jobs []driver.CompleteParams) ([]driver.CompletedJob, error) {
	return d.roles.completions.JobCompleteMany(ctx, jobs)
}

func (d *Driver) JobFail(ctx context.Context, p driver.FailParams) (*driver.Job, error) {
	return d.roles.completions.JobFail(ctx, p)
}

func (d *Driver) JobHeartbeat(ctx context.Context, p driver.HeartbeatParams) ([]driver.HeartbeatResult, error) {
	return d.roles.completions.JobHeartbeat(ctx, p)
}

func (d *Driver) JobProgress(ctx context.Context, p driver.ProgressParams) (*driver.HeartbeatResult, error) {
	return d.roles.completions.JobProgress(ctx, p)
}

func (d *Driver) LockHeld(ctx context.Context, h driver.HeldJob) (driver.HeldState, error) {
	return d.roles.completions.LockHeld(ctx, h)
}

func (d *Driver) RetryHeld(ctx context.Context, h driver.HeldJob, at time.Time, entry *driver.AttemptError, unspend bool) (*driver.Job, error) {
	return d.roles.completions.RetryHeld(ctx, h, at, entry, unspend)
}

func (d *Driver) ArchiveHeld(ctx context.Context, h driver.HeldJob, state driver.JobState, entry *driver.AttemptError) (*driver.Job, error) {
	return d.roles.completions.ArchiveHeld(ctx, h, state, entry)
}

func (d *Driver) JobPauseHeld(ctx context.Context, h driver.HeldJob) (*driver.Job, error) {
	return d.roles.completions.JobPauseHeld(ctx, h)
}

// RolePools are the driver's pools by role: "claims", "completions",
// "maintenance"; on one pool, the three are the same.
func (d *Driver) RolePools() map[string]*pgxpool.Pool {
	return map[string]*pgxpool.Pool{"maintenance": d.pool,
		"claims": d.roles.claims.q.(*pgxpool.Pool), "completions": d.roles.completions.q.(*pgxpool.Pool)}
}

// poolWatchInterval is how often a split driver looks for a full pool (a
// variable for the test).
var poolWatchInterval = 10 * time.Second

// watchPools logs, at most once per interval and pool, that a pool was
// full and acquires waited for it a tenth of the interval or more in all;
// it answers what stops it. A driver on one pool is not watched.
func watchPools(p rolePools, s poolSizes, log *slog.Logger) (stop func()) {
	if !s.split {
		return func() {}
	}
	type watched struct {
		role      string
		pool      *pgxpool.Pool
		size      int
		empty     int64 // acquires that found no idle connection
		built     int64 // connections opened
		waitedFor time.Duration
	}
	ws := []*watched{{role: "claims", pool: p.claims, size: s.claims}, {role: "completions", pool: p.completions, size: s.completions},
		{role: "maintenance", pool: p.maintenance, size: s.maintenance}}
	for _, w := range ws {
		st := w.pool.Stat()
		w.empty, w.built, w.waitedFor = st.EmptyAcquireCount(), st.NewConnsCount(), st.EmptyAcquireWaitTime()
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	every := poolWatchInterval
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			for _, w := range ws {
				// An acquire that found no idle connection either opened one
				// or, the pool full, waited for one to come back.
				st := w.pool.Stat()
				waits := (st.EmptyAcquireCount() - w.empty) - (st.NewConnsCount() - w.built)
				waited := st.EmptyAcquireWaitTime() - w.waitedFor
				w.empty, w.built, w.waitedFor = st.EmptyAcquireCount(), st.NewConnsCount(), st.EmptyAcquireWaitTime()
				// Services that tick together wait on each other a few
				// milliseconds even on an idle process: not worth a warning.
				if waits > 0 && waited >= every/10 {
					log.Warn("connection budget: the "+w.role+" pool was full; raise pools."+w.role+" (and pools.budget) if this persists",
						"pool", w.role, "size", w.size, "waits", waits, "waited", waited.Round(time.Millisecond), "in", every)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}
