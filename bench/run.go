package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
)

// Run makes a fresh database, runs the mode on Skiplock and drops the
// database again (unless Keep).
func Run(ctx context.Context, o Options) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	o = o.withDefaults()
	// In http mode the pools are the servers': the bench's own process only
	// inserts, and a budget there would slow the inserts the workers wait on.
	own := o.Pools
	if o.Mode == "http" {
		own = pgdriver.Pools{}
	}
	db, err := OpenFresh(ctx, o.DatabaseURL, o.ListenDatabaseURL, o.Keep, own)
	if err != nil {
		return Result{}, err
	}
	defer db.Close()
	if o.Citus {
		pg, ok := db.Driver.(*pgdriver.Driver)
		if !ok {
			return Result{}, fmt.Errorf("--citus: needs a PostgreSQL database with the citus extension")
		}
		if _, err := pg.Distribute(ctx, pgdriver.CitusOptions{Shards: o.CitusShards}); err != nil {
			return Result{}, fmt.Errorf("--citus: %w", err)
		}
	}
	if o.TableOptions != "" {
		if db.Admin == nil {
			return Result{}, fmt.Errorf("--table-options: needs PostgreSQL")
		}
		if _, err := db.Admin.Exec(ctx, "ALTER TABLE skiplock_jobs SET ("+o.TableOptions+")"); err != nil {
			return Result{}, fmt.Errorf("--table-options: %w", err)
		}
	}
	if o.Mode == "commit" {
		insert, drop, err := db.CommitTable(ctx)
		if err != nil {
			return Result{}, err
		}
		defer drop()
		h := &Harness{Progress: o.Progress}
		return h.Commit(ctx, insert, o.Rate, o.Duration)
	}
	timer := &claimTimer{Driver: db.Driver}
	cfg := skiplock.Config{Logger: o.Logger, FetchCooldown: o.FetchCooldown,
		FetchPollInterval: o.FetchPollInterval, CompleterBatchSize: o.CompleterBatch,
		// The leader's scheduled janitor would race --purge's own run.
		Retention: skiplock.Retention{Disabled: o.Purge > 0}, Flow: o.flowRules()}
	if o.Fair {
		cfg.Fairness = map[string]skiplock.Fairness{Queue: {}}
	}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	sys, err := NewSkiplock(timer, cfg, o.Workers)
	if err != nil {
		return Result{}, err
	}
	sys.flowKeys = o.FlowKeys
	sys.claimed = o.Claimed
	// A run cut short leaves the client running: stop it before the pool closes.
	defer func() { _ = sys.client.Stop(context.WithoutCancel(ctx)) }()
	producers := o.Producers
	if producers == 0 && o.Mode == "insert" {
		// Bulk insert is bounded by one database backend per stream:
		// insert from as many streams as there are cores.
		producers = runtime.NumCPU()
	}
	h := &Harness{Progress: o.Progress, Batch: o.Batch, Producers: producers}
	if o.Claimed {
		h.Claims = timer
	}
	if o.VacuumEvery > 0 {
		if db.Kind != "postgres" {
			return Result{}, fmt.Errorf("--vacuum-every: needs PostgreSQL")
		}
		stop, err := VacuumLoop(ctx, db.URL, o.VacuumEvery)
		if err != nil {
			return Result{}, fmt.Errorf("--vacuum-every: %w", err)
		}
		defer stop()
	}
	if o.Procs > 0 {
		if o.Exe == "" {
			return Result{}, fmt.Errorf("--procs and --mode http run the skiplock binary: Options.Exe is not set")
		}
		remote := NewRemote(sys, o, db.URL)
		defer func() { _ = remote.Stop(context.WithoutCancel(ctx)) }()
		if o.Mode == "drain" {
			return h.Drain(ctx, remote, o.Jobs)
		}
		sessions := db.watchSessions(ctx, o.Pools)
		res, err := runE2E(ctx, o, db, remote, h)
		res.Mode = o.Mode
		if err == nil {
			res.Extra = append([]string{fmt.Sprintf("procs=%d", o.Procs)}, res.Extra...)
			res.Extra = append(append(res.Extra, sessions(timer)...), remote.extra()...)
			if remote.lastPoolFull != "" && o.Logger != nil {
				o.Logger.Warn("a server said a pool was full", "last", remote.lastPoolFull)
			}
		}
		return res, err
	}
	switch o.Mode {
	case "drain":
		if o.AfterIdle {
			return h.DrainAfterIdle(ctx, sys, o.Jobs, db.VacuumJobs)
		}
		return h.Drain(ctx, sys, o.Jobs)
	case "insert":
		return h.Insert(ctx, sys, o.Jobs)
	case "latency":
		if o.Purge > 0 {
			if err := SeedArchive(ctx, db, o.Purge); err != nil {
				return Result{}, err
			}
			h.During = purge(sys.client)
		}
		if o.Bulk > 0 {
			if err := SeedBulk(ctx, sys.client, o.Bulk); err != nil {
				return Result{}, err
			}
			h.During = bulkActions(sys.client, o.BulkBatch)
		}
		return h.Latency(ctx, sys, o.Rate, o.Duration)
	case "latency-remote", "latency-http":
		return runLatencyFrom(ctx, o, db, sys, h)
	case "steady":
		return runSteady(ctx, o, db, sys, timer, h)
	case "flood":
		return runFlood(ctx, o, sys, h)
	}
	if o.Tenants > 1 {
		res, err := runE2E(ctx, o, db, &spread{Skiplock: sys, tenants: o.Tenants}, h)
		res.Extra = append(res.Extra, fmt.Sprintf("tenants=%d fair=%t", o.Tenants, o.Fair))
		return res, err
	}
	sessions := db.watchSessions(ctx, o.Pools)
	res, err := runE2E(ctx, o, db, sys, h)
	if err == nil {
		res.Extra = append(res.Extra, sessions(timer)...)
	}
	return res, err
}

func runE2E(ctx context.Context, o Options, db *Database, sys parker, h *Harness) (Result, error) {
	scaling := o.Backlog > 0 || o.Scheduled > 0 || o.HoldTx || o.HoldSnapshot
	if o.Backlog > 0 {
		if err := sys.Park(ctx, o.Backlog, Queue+"_backlog", time.Time{}, 10_000); err != nil {
			return Result{}, fmt.Errorf("park backlog: %w", err)
		}
	}
	if o.Scheduled > 0 {
		if err := sys.Park(ctx, o.Scheduled, Queue, time.Now().Add(24*time.Hour), 10_000); err != nil {
			return Result{}, fmt.Errorf("park scheduled jobs: %w", err)
		}
	}
	var hold *holdRun
	if o.HoldTx || o.HoldSnapshot {
		var err error
		if hold, err = startHold(ctx, db, o.HoldTx); err != nil {
			return Result{}, err
		}
		defer func() {
			if hold != nil {
				hold.end()
			}
		}()
	}
	if scaling || o.Duration >= 2*time.Minute {
		h.Window = min(time.Minute, o.Duration/4).Truncate(time.Second)
	}
	before, err := db.TableBytes(ctx)
	if err != nil {
		return Result{}, err
	}
	res, err := h.E2E(ctx, sys, o.Duration)
	if err != nil {
		return Result{}, err
	}
	after, err := db.TableBytes(ctx)
	if err != nil {
		return Result{}, err
	}
	if db.Kind == "postgres" {
		res.Extra = append(res.Extra, fmt.Sprintf("table_bytes_start=%d table_bytes_end=%d", before, after))
	}
	if hold != nil {
		peak := hold.end()
		hold = nil
		back, size, err := settle(ctx, o, db, before)
		if err != nil {
			return Result{}, fmt.Errorf("after the hold: %w", err)
		}
		res.Extra = append(res.Extra, fmt.Sprintf("table_bytes_max=%d table_bytes_after_hold=%d back_after_s=%.1f", peak, size, back))
	}
	return res, nil
}

// parker is a System that can park jobs it never works (Skiplock, Remote).
type parker interface {
	System
	Park(ctx context.Context, n int, queue string, at time.Time, batch int) error
}

func runSteady(ctx context.Context, o Options, db *Database, sys *Skiplock, timer *claimTimer, h *Harness) (Result, error) {
	probe := SteadyProbe{Every: o.SampleEvery}
	if db.Admin != nil {
		probe.DeadTuples = db.DeadTuples
	}
	res, err := h.Steady(ctx, sys, o.Rate, o.Duration, probe)
	if err != nil {
		return Result{}, err
	}
	res.Extra = append([]string{fmt.Sprintf("claim_p95_ms=%.2f", ms(timer.percentile(0.95)))}, res.Extra...)
	return res, nil
}
