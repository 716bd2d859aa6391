package pgdriver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// ArchivePrepare creates the archive's daily partitions from today up to
// `until`. Rows that landed in the default partition for such a day (the
// partition was missing when they finished) move into the new one.
func (e executor) ArchivePrepare(ctx context.Context, until time.Time) error {
	day := time.Now().UTC().Truncate(24 * time.Hour)
	for ; !day.After(until.UTC()); day = day.Add(24 * time.Hour) {
		if err := e.ensurePartition(ctx, day); err != nil {
			return fmt.Errorf("archive partition for %s: %w", day.Format(time.DateOnly), err)
		}
	}
	return nil
}

// partitionExists answers whether the day's partition, or a month partition
// that covers the day (ArchiveFoldMonth), exists.
const partitionExists = `SELECT to_regclass($1) IS NOT NULL OR to_regclass($2) IS NOT NULL`

func (e executor) ensurePartition(ctx context.Context, day time.Time) error {
	name, month := partitionPrefix+day.Format("20060102"), partitionPrefix+day.Format("200601")
	var exists bool
	if err := e.q.QueryRow(ctx, partitionExists, name, month).Scan(&exists); err != nil || exists {
		return err
	}
	from, to := day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339)
	ident := pgx.Identifier{name}.Sanitize()
	return e.inTx(ctx, func(tx executor) error {
		// Serialise with other processes preparing the same day.
		if _, err := tx.q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, name); err != nil {
			return err
		}
		if err := tx.q.QueryRow(ctx, partitionExists, name, month).Scan(&exists); err != nil || exists {
			return err
		}
		stmts := []string{
			fmt.Sprintf(`CREATE TABLE %s (LIKE skiplock_jobs_archive INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`, ident),
			fmt.Sprintf(`WITH moved AS (DELETE FROM skiplock_jobs_archive_default WHERE finished_at >= '%s' AND finished_at < '%s' RETURNING *)
				INSERT INTO %s SELECT * FROM moved`, from, to, ident),
			fmt.Sprintf(`ALTER TABLE skiplock_jobs_archive ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')`, ident, from, to),
		}
		for _, s := range stmts {
			if _, err := tx.q.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// upkeep runs the hot table's upkeep (driver.HotTableStore) on the pool,
// with what it remembers between runs. Only the Driver has one: a
// transaction's executor has no hot-table upkeep to call.
type upkeep struct {
	executor
	vac *hotTableUpkeep
}

// hotTableUpkeep is what the hot table's upkeep remembers: whether the last
// vacuum left rows it could not remove, and the oldest snapshot in the
// database then; what a live job took in the table after its last rebuild;
// the server's version.
type hotTableUpkeep struct {
	mu    sync.Mutex
	stuck bool
	last  string
	// held: the last look found the snapshot that the vacuum before it met
	// still open, so vacuum can remove nothing deleted since. Only then
	// does a rebuild or a spill table pay for itself (see HotTableRebuild).
	held bool
	// afterHold: a held snapshot has ended since the last rebuild. Its
	// churn left the table bloated, and vacuum makes that space reusable
	// without giving it back: one rebuild may follow, once the ratio holds.
	afterHold bool
	perJob    int64
	version   int // the server's server_version_num, once asked

	// Spill tables (spill.go): the hot table's holder as last read and
	// when.
	holder    string
	holderAt  time.Time
	overUntil time.Time            // more than MaxRows jobs counted: no count again before
	emptied   map[string]bool      // spill tables emptied since they were a target
	notBefore map[string]time.Time // spill tables not to be looked at again before then
}

// recountAfter: once the live jobs were counted past MaxRows, no count
// again before this (each reads MaxRows rows).
const recountAfter = 15 * time.Second

// hotTableDead answers the hot table's dead rows as the statistics count
// them: up to a second behind, and what the last vacuum could not remove
// right after it.
const hotTableDead = `SELECT pg_stat_get_dead_tuples('skiplock_jobs'::regclass)`

// hotTableHorizon answers the oldest transaction id that a snapshot in this
// database (or a replication slot, or a prepared transaction) still needs:
// vacuum removes no row deleted after it. "" when none holds one (or this
// role may not see the others). A vacuum's own snapshot holds back no other
// vacuum, so autovacuum workers do not count: one busy with a large table
// would otherwise look like a held snapshot for as long as it runs. It
// reads every backend's status (milliseconds): it is asked only once a
// vacuum has left rows behind.
const hotTableHorizon = `
SELECT coalesce((SELECT x::text FROM (
           SELECT backend_xmin FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
              AND backend_type <> 'autovacuum worker'
           UNION ALL SELECT backend_xid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL
           UNION ALL SELECT xmin FROM pg_replication_slots WHERE xmin IS NOT NULL
           UNION ALL SELECT transaction FROM pg_prepared_xacts WHERE database = current_database()
       ) AS h(x) ORDER BY age(x) DESC LIMIT 1), '')`

// HotTableVacuum vacuums when deadRows have piled up, unless the last
// vacuum left deadRows behind and the oldest snapshot is still the one it
// met: no row deleted since can go until that snapshot ends. A transaction
// held open for minutes would otherwise have the hot table read whole again
// and again while it grows: in a 6-minute held-transaction e2e run,
// throughput fell 41% first to last minute.
func (e upkeep) HotTableVacuum(ctx context.Context, deadRows int64) (bool, error) {
	var dead int64
	if err := e.q.QueryRow(ctx, hotTableDead).Scan(&dead); err != nil || dead < deadRows {
		return false, err
	}
	e.vac.mu.Lock()
	defer e.vac.mu.Unlock()
	if e.vac.stuck {
		var horizon string
		if err := e.q.QueryRow(ctx, hotTableHorizon).Scan(&horizon); err != nil {
			return false, err
		}
		if horizon != "" && horizon == e.vac.last {
			e.vac.held = true
			return false, nil
		}
	}
	if e.vac.held {
		e.vac.afterHold = true
	}
	e.vac.held = false
	// VACUUM cannot run in a transaction: this goes straight to the pool.
	// No ANALYZE: sampling the table every 10 s cost a third of e2e
	// throughput beside a 1M backlog, and the hot statements do not plan
	// from its statistics (their plans are pinned; autovacuum's own analyze
	// keeps the statistics for the rest).
	// No truncation of the table's empty end either: it takes the table's
	// exclusive lock, and claims queue behind it (HotTableRebuild gives
	// the space back instead).
	// Nor its TOAST table, which payloads rarely reach (autovacuum sees to
	// it). From PostgreSQL 16, nor the database's oldest transaction id,
	// which every VACUUM otherwise recomputes by reading all of pg_class.
	vacuum := `VACUUM (TRUNCATE false, PROCESS_TOAST false) skiplock_jobs`
	if e.vac.version == 0 {
		if err := e.q.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&e.vac.version); err != nil {
			return false, err
		}
	}
	if e.vac.version >= 160000 {
		vacuum = `VACUUM (TRUNCATE false, PROCESS_TOAST false, SKIP_DATABASE_STATS) skiplock_jobs`
	}
	if _, err := e.q.Exec(ctx, vacuum); err != nil {
		return false, err
	}
	// The vacuum has told the statistics what it could not remove.
	if err := e.q.QueryRow(ctx, hotTableDead).Scan(&dead); err != nil {
		return true, err
	}
	e.vac.stuck, e.vac.last = dead >= deadRows, ""
	if e.vac.stuck {
		if err := e.q.QueryRow(ctx, hotTableHorizon).Scan(&e.vac.last); err != nil {
			return true, err
		}
	}
	return true, nil
}

// hotTableSize answers the hot table's size with its indexes and its live
// jobs as the statistics count them (up to a second behind).
// A rebuild elsewhere (a second leader's) that drops the table while its
// size is read makes the size NULL: 0 then, and the next look sees the new
// table.
const hotTableSize = `SELECT coalesce(pg_total_relation_size('skiplock_jobs'), 0), pg_stat_get_live_tuples('skiplock_jobs'::regclass)`

// hotTableHolder names the session that has held a lock on the hot table
// in a transaction open for two seconds or more ("" when none does); an
// autovacuum worker is none (it cancels itself for a rebuild's lock), nor
// is any VACUUM in progress: on a busy machine one can take seconds, but it
// ends by itself and its snapshot holds back no other vacuum.
const hotTableHolder = `
SELECT coalesce((SELECT CASE WHEN a.pid IS NULL THEN 'a prepared transaction'
                             ELSE format('pid %s (%s), in a transaction since %s', a.pid, a.application_name, a.xact_start) END
                   FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
                  WHERE l.locktype = 'relation' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND l.relation = 'skiplock_jobs'::regclass AND l.granted AND l.pid IS DISTINCT FROM pg_backend_pid()
                    AND (a.pid IS NULL OR a.xact_start < now() - interval '2 seconds')
                    -- autovacuum gives its lock up to whoever asks for a conflicting one
                    AND a.backend_type IS DISTINCT FROM 'autovacuum worker'
                    -- a VACUUM, however slow, ends by itself and holds back no other vacuum
                    AND NOT EXISTS (SELECT FROM pg_stat_progress_vacuum v WHERE v.pid = l.pid)
                  ORDER BY a.xact_start NULLS FIRST LIMIT 1), '')`

// HotTableRebuild rebuilds the hot table once it takes limits.Ratio times
// what its live jobs need (what a live job took after the last rebuild, 1 kB
// before the first), or limits.HeldBytes while a snapshot is held, unless a
// transaction open for seconds holds a lock on it, which the rebuild would
// only wait behind.
func (e upkeep) HotTableRebuild(ctx context.Context, limits driver.RebuildLimits) (driver.Rebuild, error) {
	limits = rebuildDefaults(limits)
	var r driver.Rebuild
	var live int64
	if err := e.q.QueryRow(ctx, hotTableSize).Scan(&r.BytesBefore, &live); err != nil {
		return r, fmt.Errorf("hot table size: %w", err)
	}
	perJob := int64(1024)
	e.vac.mu.Lock()
	defer e.vac.mu.Unlock()
	if e.vac.perJob > 0 {
		perJob = e.vac.perJob
	}
	need := limits.Ratio * (live + 1) * perJob
	if e.vac.held {
		need = min(need, limits.HeldBytes)
	}
	if !limits.Force && (r.BytesBefore < limits.MinBytes || r.BytesBefore < need) {
		// Not worth a rebuild yet; but if vacuum is stuck behind a snapshot
		// and that snapshot's transaction holds a lock no rebuild could
		// pass, say so now, while the table is still small: new jobs can
		// go to spill tables before it has grown (HotTableSpill).
		if e.vac.held && r.BytesBefore >= limits.MinBytes {
			held, err := e.holderEverySecond(ctx)
			r.HeldBy = held
			return r, err
		}
		return r, nil
	}
	// Nothing but a held snapshot makes a rebuild worth its lock: after a
	// burst a vacuum makes the space reusable, and the live count the ratio
	// reads lags the table by up to a second (right after a bulk insert it
	// took a 50,000-job backlog for an empty table, and copied it whole,
	// claims waiting, again and again).
	if !limits.Force && !e.vac.held && !e.vac.afterHold {
		return r, nil
	}
	if err := e.q.QueryRow(ctx, hotTableHolder).Scan(&r.HeldBy); err != nil || r.HeldBy != "" {
		return r, err
	}
	if live > limits.MaxRows {
		// The statistics' count may be wrong: a rebuild truncates the table,
		// and what other sessions inserted and deleted before it but report
		// after it is counted again. Count them, at most once every
		// recountAfter while they are too many.
		if time.Now().Before(e.vac.overUntil) {
			r.Refused = fmt.Sprintf("more than %d jobs live", limits.MaxRows)
			return r, nil
		}
		few, err := e.fewerJobs(ctx, "skiplock_jobs", limits.MaxRows+1)
		if err != nil {
			return r, err
		}
		if !few {
			e.vac.overUntil = time.Now().Add(recountAfter)
			r.Refused = fmt.Sprintf("more than %d jobs live", limits.MaxRows)
			return r, nil
		}
	}
	// Spill tables are children of the hot table: they go back first
	// (HotTableSpill), and the table is rebuilt after.
	var spilled bool
	if err := e.q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass)`).Scan(&spilled); err != nil || spilled {
		return r, err
	}
	err := e.q.QueryRow(ctx, `SELECT skiplock_hot_table_rebuild($1, $2)`, limits.MaxRows, limits.LockWait.Milliseconds()).Scan(&r.Moved)
	if err != nil {
		return r, fmt.Errorf("rebuild the hot table: %w", err)
	}
	switch r.Moved {
	case -1: // the lock not had in time: the next try
	case -2:
		r.Refused = fmt.Sprintf("more than %d jobs live", limits.MaxRows)
	case -3:
		r.Refused = "the database role in use does not own the hot table"
	}
	if r.Moved < 0 {
		r.Moved = 0
		return r, nil
	}
	r.Done, e.vac.afterHold = true, false
	if err := e.q.QueryRow(ctx, `SELECT coalesce(pg_total_relation_size('skiplock_jobs'), 0)`).Scan(&r.BytesAfter); err != nil {
		return r, err
	}
	if r.Moved >= 100 {
		e.vac.perJob = max(256, r.BytesAfter/r.Moved)
	}
	return r, nil
}

func rebuildDefaults(l driver.RebuildLimits) driver.RebuildLimits {
	if l.MinBytes <= 0 {
		l.MinBytes = 1 << 20
	}
	if l.Ratio <= 0 {
		l.Ratio = 8
	}
	if l.MaxRows <= 0 {
		l.MaxRows = 100_000
	}
	if l.HeldBytes <= 0 {
		l.HeldBytes = 128 << 20
	}
	if l.LockWait <= 0 {
		l.LockWait = 50 * time.Millisecond
	}
	return l
}

// UniqueKeyPrune deletes a batch of expired window keys of jobs no longer live.
func (e executor) UniqueKeyPrune(ctx context.Context, before time.Time, limit int) (int, error) {
	// On Citus no window key is taken (citusRefuses), so there is none to
	// prune, and the pruning's row locks across shards cannot run there.
	if citus, err := e.onCitus(ctx); err != nil || citus {
		return 0, err
	}
	tag, err := e.q.Exec(ctx, uniqueKeyPrune.SQL, uniqueKeyPrune.Args(pruneArgs{before, limit})...)
	if err != nil {
		return 0, fmt.Errorf("prune unique keys: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

var uniqueKeyPrune = bind[pruneArgs]("UniqueKeyPrune")

type pruneArgs struct {
	Before time.Time `sql:"before"`
	Limit  int       `sql:"limit"`
}
