package pgdriver

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/migrations"
	"github.com/skiplock/skiplock/driver/sqlset"
)

// citusSQL distributes a migrated schema on Citus (docs/scale.md).
//
//go:embed citus.sql
var citusSQL string

// CitusOptions shape how Distribute spreads a schema over a Citus cluster.
type CitusOptions struct {
	// Shards is how many shards the jobs and the archive are split into;
	// 0 leaves it to Citus (its citus.shard_count, 32 unless set).
	Shards int
}

// ErrNoCitus is answered by Distribute on a database without the citus
// extension.
var ErrNoCitus = errors.New("the citus extension is not installed in this database: run CREATE EXTENSION citus on the coordinator (and on each worker) first, see docs/scale.md")

// Distribute makes the migrated schema a Citus one: jobs and the archive
// distributed by queue, the small tables reference tables. It answers false
// when the schema was distributed already, and refuses a schema with
// migrations still to apply (each later migration then runs on the
// distributed schema; Citus passes its DDL on to the shards).
func (d *Driver) Distribute(ctx context.Context, o CitusOptions) (bool, error) {
	if o.Shards < 0 || o.Shards > 4096 {
		return false, fmt.Errorf("citus shards: must be between 0 and 4096, got %d", o.Shards)
	}
	all, err := migrations.Load(migrationFiles, "migrations")
	if err != nil {
		return false, err
	}
	done := false
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('skiplock_migrate'))`); err != nil {
			return err
		}
		var installed bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&installed); err != nil {
			return err
		}
		if !installed {
			return ErrNoCitus
		}
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return fmt.Errorf("read the applied migrations (run migrate up first): %w", err)
		}
		if pending := migrations.Pending(all, applied, 0); len(pending) > 0 {
			return fmt.Errorf("distribute on citus: %d migrations are not applied yet (run migrate up first)", len(pending))
		}
		var distributed bool
		if err := tx.QueryRow(ctx, citusDistributed).Scan(&distributed); err != nil {
			return err
		}
		if distributed {
			return nil
		}
		if o.Shards > 0 {
			if _, err := tx.Exec(ctx, `SELECT set_config('citus.shard_count', $1, true)`, strconv.Itoa(o.Shards)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, citusSQL); err != nil {
			return fmt.Errorf("distribute on citus: %w", err)
		}
		done = true
		return nil
	})
	if err == nil && done {
		d.citus.set(true)
	}
	return done, err
}

// citusDistributed answers whether this schema's jobs are a distributed table.
const citusDistributed = `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass('skiplock_jobs'))`

// citusMode remembers whether the schema is distributed on Citus, once
// known: an atomic load on the hot path, a query the first time.
type citusMode struct {
	mu    sync.Mutex
	state atomic.Int32 // citusUnknown, citusOff or citusOn
}

const (
	citusUnknown int32 = iota
	citusOff
	citusOn
)

func (c *citusMode) set(on bool) {
	if on {
		c.state.Store(citusOn)
	} else {
		c.state.Store(citusOff)
	}
}

// OnCitus answers whether the schema's jobs are distributed on Citus.
func (d *Driver) OnCitus(ctx context.Context) (bool, error) { return d.citus.on(ctx, d.pool) }

// on answers whether the schema is distributed, asking q once.
func (c *citusMode) on(ctx context.Context, q querier) (bool, error) {
	switch c.state.Load() {
	case citusOff:
		return false, nil
	case citusOn:
		return true, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.state.Load(); st != citusUnknown {
		return st == citusOn, nil
	}
	var installed bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&installed); err != nil {
		return false, err
	}
	on := false
	if installed {
		if err := q.QueryRow(ctx, citusDistributed).Scan(&on); err != nil {
			return false, err
		}
	}
	c.set(on)
	return on, nil
}

// onCitus answers whether the schema is distributed on Citus (false for a
// migration's executor, which has no citusMode).
func (e executor) onCitus(ctx context.Context) (bool, error) {
	if e.citus == nil {
		return false, nil
	}
	return e.citus.on(ctx, e.q)
}

// The maintenance statements that pick jobs across queues, in the form a
// schema distributed on Citus can run (citus_queries.sql).
var (
	citusJobRescuePaused     = bind[pageArgs]("CitusJobRescuePaused")
	citusJobRescueRequeue    = bind[pageArgs]("CitusJobRescueRequeue")
	citusJobRescueFinal      = bind[pageArgs]("CitusJobRescueFinal")
	citusJobRescueExhausted  = bind[pageArgs]("CitusJobRescueExhausted")
	citusJobPromoteScheduled = bind[pageArgs]("CitusJobPromoteScheduled")
	citusJobHeartbeat        = bind[heartbeatArgs]("CitusJobHeartbeat")
	citusJobQueue            = bind[idArg]("CitusJobQueue")
	citusJobHeldForUpdate    = bind[citusHeldArgs]("CitusJobHeldForUpdate")
	citusJobLiveForUpdate    = bind[citusIDArgs]("CitusJobLiveForUpdate")
	citusJobFailHeld         = bind[citusFailArgs]("CitusJobFailHeld")
)

// pageStmt is a statement that picks a page of jobs (pageArgs).
type pageStmt = sqlset.Stmt[pageArgs]

// The arguments of the statements that lock one job in its queue's shard.
type (
	citusIDArgs struct {
		ID    int64  `sql:"id"`
		Queue string `sql:"queue"`
	}
	citusHeldArgs struct {
		heldArgs
		Queue string `sql:"queue"`
	}
	citusFailArgs struct {
		failArgs
		Queue string `sql:"queue"`
	}
)

// jobQueue answers the queue of a live job on Citus, "" for a job not live
// (finished, or unknown), which the statement after it then finds in no
// shard: a statement that locks a job's row must name its shard there.
func (e executor) jobQueue(ctx context.Context, id int64) (string, error) {
	var queue string
	err := e.q.QueryRow(ctx, citusJobQueue.SQL, citusJobQueue.Args(idArg{id})...).Scan(&queue)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return queue, err
}

// planSettings answers settings as a schema distributed on Citus can take
// them: without forcing the generic plan, which Citus cannot distribute
// over several shards (the claim, one shard's, is planned on its worker).
func (e executor) planSettings(ctx context.Context, settings string) (string, error) {
	on, err := e.onCitus(ctx)
	if err != nil || !on {
		return settings, err
	}
	return strings.Replace(settings, forceGenericPlan, "", 1), nil
}

// forceGenericPlan is the part of genericPlan (and the settings built on
// it) that Citus cannot take.
const forceGenericPlan = "set_config('plan_cache_mode', 'force_generic_plan', true), "

// citusRefuses answers an error naming what a job asks for that a schema
// distributed on Citus cannot do (docs/scale.md): dependencies (a parent
// may live in any shard, and its row cannot be locked from another),
// flow control (its slots are freed by a trigger that cannot write another
// table from a shard) and window keys (their expiry is compared with now()
// in a conflict clause, which Citus refuses). Plain jobs are never asked
// about, so they pay nothing.
func (e executor) citusRefuses(ctx context.Context, jobs []*driver.InsertParams) error {
	field := ""
	for _, p := range jobs {
		switch {
		case len(p.DependsOn) > 0:
			field = "depends_on"
		case p.Flow != nil:
			field = "concurrency_key and rate_key"
		case p.IdempotencyKey != "" && p.UniqueWindow > 0:
			field = "an idempotency key with a window"
		default:
			continue
		}
		break
	}
	if field == "" {
		return nil
	}
	on, err := e.onCitus(ctx)
	if err != nil || !on {
		return err
	}
	return fmt.Errorf("%s: %w on a schema distributed on Citus (see docs/scale.md)", field, driver.ErrUnsupported)
}

// On Citus the hot table is a set of shards on the workers. Rebuilding it
// (a new table renamed into place) and spill tables (children that inherit
// from it) cannot be distributed, so neither runs there: each shard is a
// small table of its own that vacuum keeps (HotTableVacuum below).

// HotTableRebuild rebuilds the hot table, except on Citus.
func (d *Driver) HotTableRebuild(ctx context.Context, limits driver.RebuildLimits) (driver.Rebuild, error) {
	if on, err := d.OnCitus(ctx); err != nil || on {
		return driver.Rebuild{}, err
	}
	return d.upkeep.HotTableRebuild(ctx, limits)
}

// HotTableSpill keeps new jobs in spill tables while the hot table is held,
// except on Citus.
func (d *Driver) HotTableSpill(ctx context.Context, open bool, limits driver.SpillLimits) (driver.Spill, error) {
	if on, err := d.OnCitus(ctx); err != nil || on {
		return driver.Spill{}, err
	}
	return d.upkeep.HotTableSpill(ctx, open, limits)
}

// citusHotTableDead sums the dead rows of the hot table's shards, each read
// on its worker: the coordinator's table holds no rows of its own.
const citusHotTableDead = `SELECT coalesce(sum(result::bigint), 0) FROM run_command_on_shards('skiplock_jobs',
    $$SELECT pg_stat_get_dead_tuples('%s'::regclass)$$) WHERE success`

// HotTableVacuum vacuums the hot table when deadRows have piled up. On
// Citus it counts them over the shards, and the VACUUM the coordinator is
// sent runs on every shard, each on its worker.
func (d *Driver) HotTableVacuum(ctx context.Context, deadRows int64) (bool, error) {
	on, err := d.OnCitus(ctx)
	if err != nil {
		return false, err
	}
	if !on {
		return d.upkeep.HotTableVacuum(ctx, deadRows)
	}
	var dead int64
	if err := d.pool.QueryRow(ctx, citusHotTableDead).Scan(&dead); err != nil || dead < deadRows {
		return false, err
	}
	if _, err := d.pool.Exec(ctx, `VACUUM (TRUNCATE false, PROCESS_TOAST false) skiplock_jobs`); err != nil {
		return false, fmt.Errorf("vacuum the hot table's shards: %w", err)
	}
	return true, nil
}
