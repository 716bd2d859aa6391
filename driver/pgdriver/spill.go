package pgdriver

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlset"
)

// Spill tables (migration 025, docs/hot-path-storage.md): while a
// transaction open elsewhere holds a lock on the hot table, no rebuild can
// give back what its churn leaves behind, so new plain jobs go to a spill
// table, a child of the hot table that every statement reading
// skiplock_jobs reads too.
//
// Where a job lands is correct whatever the clocks: the hot table always,
// a spill table for as long as it exists (a spill table is emptied or
// dropped only under its exclusive lock, its jobs moved to a table that
// stays). An insert into a spill table dropped since this driver read the
// target fails with nothing stored, and runs again into the hot table;
// only the driver's own transactions spill, so that failure never aborts a
// caller's transaction (a caller's jobs go to the hot table).

// hotSpill is a driver's view of the spill target, read at most once a
// second in the background, never in a caller's transaction.
type hotSpill struct {
	read func(ctx context.Context) (string, error) // on the pool

	mu      sync.Mutex
	target  string    // "" while new jobs go to the hot table
	readAt  time.Time // when the read that answered target began
	reading bool
}

// table answers the table new plain jobs go to now: "" for the hot table.
// A target read a second ago or more starts a read in the background; the
// caller does not wait for it.
func (s *hotSpill) table() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.readAt) >= time.Second && !s.reading {
		s.reading = true
		go s.refresh()
	}
	return s.target
}

func (s *hotSpill) refresh() {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	target, err := s.read(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reading = false
	if err == nil {
		s.target, s.readAt = target, start
	}
}

// forget drops the target after an insert found its table gone.
func (s *hotSpill) forget() {
	s.mu.Lock()
	s.target, s.readAt = "", time.Time{}
	s.mu.Unlock()
}

// into answers st writing table ("": the hot table).
func into[A any](st sqlset.Stmt[A], table string) string {
	if table == "" {
		return st.SQL
	}
	return st.Into(pgx.Identifier{table}.Sanitize())
}

const spillTarget = `SELECT coalesce((SELECT name FROM skiplock_hot_spill WHERE target), '')`

// insertInto runs insert for the table new plain jobs go to ("": the hot
// table), and again for the hot table if that table has gone. Inside one
// of the driver's own transactions (flow inserts), the spill insert runs
// under a savepoint, so that a table gone undoes that insert only.
func (e executor) insertInto(ctx context.Context, insert func(e executor, table string) error) error {
	table := e.sp.table()
	if table == "" {
		return insert(e, "")
	}
	var err error
	if _, nested := e.q.(pgx.Tx); nested {
		err = e.inTx(ctx, func(sp executor) error { return insert(sp, table) })
	} else {
		err = insert(e, table)
	}
	if isUndefinedTable(err) {
		e.sp.forget()
		err = insert(e, "")
	}
	return err
}

func isUndefinedTable(err error) bool { return hasCode(err, "42P01") }

// spillTables answers the spill tables with their sizes.
const spillTables = `
SELECT s.name, s.target, coalesce(pg_total_relation_size(c.oid), 0)
FROM skiplock_hot_spill s LEFT JOIN pg_class c ON c.oid = to_regclass(quote_ident(s.name))
ORDER BY s.name`

type spillTable struct {
	name   string
	target bool
	bytes  int64
}

// HotTableSpill keeps new jobs out of a hot table that a transaction open
// elsewhere keeps from being rebuilt (see hotSpill). With open, and no spill
// table yet, it makes one. With spill tables, while the hot table's holder
// stays it moves new jobs on to another spill table once one has grown to
// limits.Bytes, and empties the spill tables that have drained; once the
// holder has ended it sends new jobs back to the hot table, moves the spill
// tables' jobs there and drops them.
func (e upkeep) HotTableSpill(ctx context.Context, open bool, limits driver.SpillLimits) (driver.Spill, error) {
	limits = spillDefaults(limits)
	var out driver.Spill
	tables, err := e.spillTables(ctx)
	if err != nil || (len(tables) == 0 && !open) {
		return out, err
	}
	if len(tables) == 0 {
		return e.spillOpen(ctx, limits, out)
	}
	out.Active, out.Tables = true, len(tables)
	for _, t := range tables {
		out.Bytes += t.bytes
		if t.target {
			out.Target = t.name
		}
	}
	e.vac.mu.Lock()
	held, err := e.holderEverySecond(ctx)
	perJob := max(e.vac.perJob, 256)
	e.vac.mu.Unlock()
	if err != nil {
		return out, err
	}
	out.HeldBy = held
	if held == "" {
		return e.spillMerge(ctx, limits, tables, out)
	}
	return e.spillRotate(ctx, limits, tables, perJob, out)
}

// spillRotate, while the holder stays: moves new jobs on from a target
// that has grown, else empties one drained spill table, its live jobs sent
// to the target.
func (e upkeep) spillRotate(ctx context.Context, limits driver.SpillLimits, tables []spillTable, perJob int64, out driver.Spill) (driver.Spill, error) {
	// A spill table is worth emptying once it takes floor or more and its
	// live jobs need a Ratio-th of that. The target is left for another
	// once it takes limits.Bytes, whatever its live jobs need: a backlog
	// then spreads over tables that are emptied as they drain, rather than
	// one table holding the backlog and every row finished beside it. A
	// table this leader has emptied (or one that small) takes new jobs
	// again before a new one is made.
	floor := min(limits.Bytes, 2<<20)
	e.vac.mu.Lock()
	emptied := maps.Clone(e.vac.emptied)
	e.vac.mu.Unlock()
	i := slices.IndexFunc(tables, func(t spillTable) bool { return t.target })
	if i < 0 || tables[i].bytes >= limits.Bytes {
		i := slices.IndexFunc(tables, func(t spillTable) bool { return !t.target && (emptied[t.name] || t.bytes < floor) })
		switch {
		case i >= 0:
			if err := e.spillTarget(ctx, tables[i].name); err != nil {
				return out, err
			}
			out.Target = tables[i].name
			e.vac.mu.Lock()
			delete(e.vac.emptied, out.Target)
			e.vac.mu.Unlock()
		case len(tables) < limits.MaxTables:
			return e.spillOpen(ctx, limits, out)
		}
		return out, nil
	}
	for _, t := range tables {
		if t.target || emptied[t.name] || t.bytes < floor || e.spillWaiting(t.name) {
			continue
		}
		few, err := e.fewerJobs(ctx, t.name, max(1, t.bytes/(limits.Ratio*perJob)))
		if err != nil {
			return out, err
		}
		if !few {
			e.spillWait(t.name, spillRecount)
			continue
		}
		moved, done, err := e.spillEmpty(ctx, t.name, false, limits)
		if done {
			out.Emptied, out.Moved = t.name, moved
			e.vac.mu.Lock()
			if e.vac.emptied == nil {
				e.vac.emptied = map[string]bool{}
			}
			e.vac.emptied[t.name] = true
			e.vac.mu.Unlock()
		}
		return out, err
	}
	return out, nil
}

// fewerJobs says whether table name (the hot table or a spill table) holds
// fewer than n jobs of its own. It counts them rather than trusting the
// statistics' live tuples, which lag behind and, on a table truncated while
// other sessions wrote to it, can stay wrong for good. The count stops at
// n, so a table full of jobs is read only until n are found. A spill
// table dropped meanwhile answers false: there is nothing to empty.
func (e upkeep) fewerJobs(ctx context.Context, name string, n int64) (bool, error) {
	var jobs int64
	err := e.q.QueryRow(ctx, `SELECT count(*) FROM (SELECT FROM ONLY `+pgx.Identifier{name}.Sanitize()+` LIMIT $1) s`, n).Scan(&jobs)
	if isUndefinedTable(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("count the jobs of %s: %w", name, err)
	}
	return jobs < n, nil
}

// spillTarget makes spill table name the one new plain jobs go to ("": the
// hot table), for every row in one statement.
func (e upkeep) spillTarget(ctx context.Context, name string) error {
	if _, err := e.q.Exec(ctx, `UPDATE skiplock_hot_spill SET target = (name = $1)`, name); err != nil {
		return fmt.Errorf("spill target: %w", err)
	}
	return nil
}

// spillEmpty moves the live jobs of spill table name to the target (the
// hot table when there is none) and truncates it, or drops it; done is
// false when its lock was not had, and the table then waits spillRetry:
// while the emptying waits for the lock, every claim waits behind it.
func (e upkeep) spillEmpty(ctx context.Context, name string, drop bool, limits driver.SpillLimits) (moved int64, done bool, err error) {
	err = e.q.QueryRow(ctx, `SELECT skiplock_hot_spill_empty($1, $2, $3)`, name, drop, limits.LockWait.Milliseconds()).Scan(&moved)
	if isUndefinedTable(err) {
		// Dropped by another upkeep while this one waited for its lock:
		// nothing left to do here.
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("empty spill table %s: %w", name, err)
	}
	done = moved >= 0
	if done {
		e.spillWait(name, 0)
	} else {
		e.spillWait(name, spillRetry)
	}
	return moved, done, nil
}

func (e upkeep) spillTables(ctx context.Context) ([]spillTable, error) {
	rows, err := e.q.Query(ctx, spillTables)
	if isUndefinedTable(err) {
		// A schema from before migration 025: no spill tables, and no
		// warning four times a second until it is migrated.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spill tables: %w", err)
	}
	defer rows.Close()
	var out []spillTable
	for rows.Next() {
		var t spillTable
		if err := rows.Scan(&t.name, &t.target, &t.bytes); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (e upkeep) spillOpen(ctx context.Context, limits driver.SpillLimits, out driver.Spill) (driver.Spill, error) {
	var name *string
	if err := e.q.QueryRow(ctx, `SELECT skiplock_hot_spill_open($1)`, limits.LockWait.Milliseconds()).Scan(&name); err != nil {
		return out, fmt.Errorf("open a spill table: %w", err)
	}
	if name == nil {
		out.Refused = "the database role in use does not own the hot table, or the hot table has row security, rules or column grants"
		return out, nil
	}
	if *name == "" { // the lock not had in time: the next look
		return out, nil
	}
	out.Active, out.Opened, out.Target = true, *name, *name
	out.Tables++
	return out, nil
}

// holderEverySecond answers the hot table's holder (hotTableHolder), read
// at most once a second; the caller holds e.vac.mu.
func (e upkeep) holderEverySecond(ctx context.Context) (string, error) {
	if time.Since(e.vac.holderAt) < time.Second {
		return e.vac.holder, nil
	}
	var held string
	if err := e.q.QueryRow(ctx, hotTableHolder).Scan(&held); err != nil {
		return "", err
	}
	e.vac.holder, e.vac.holderAt = held, time.Now()
	return held, nil
}

// spillMerge sends new jobs back to the hot table, and moves the spill
// tables' jobs there and drops them, one a look. A driver that still sends
// jobs to a dropped spill table finds it gone and sends them to the hot
// table.
func (e upkeep) spillMerge(ctx context.Context, limits driver.SpillLimits, tables []spillTable, out driver.Spill) (driver.Spill, error) {
	if out.Target != "" {
		if err := e.spillTarget(ctx, ""); err != nil {
			return out, err
		}
		out.Target = ""
	}
	for _, t := range tables {
		if e.spillWaiting(t.name) {
			continue
		}
		moved, done, err := e.spillEmpty(ctx, t.name, true, limits)
		if done {
			out.Dropped, out.Moved = t.name, moved
			out.Tables--
			out.Active = out.Tables > 0
			e.vac.mu.Lock()
			delete(e.vac.emptied, t.name) // names are never given again
			e.vac.mu.Unlock()
		}
		return out, err
	}
	return out, nil
}

// spillRetry is how long a spill table whose lock was not had waits
// before it is tried again; spillRecount, how long one whose jobs were
// counted and found too many to empty it waits before they are counted
// again (a count reads up to Bytes / (Ratio × bytes per job) rows: 9 ms
// for 14,000 on a 2-core machine, every 250 ms otherwise, for each such
// table).
const (
	spillRetry   = 5 * time.Second
	spillRecount = time.Second
)

// spillWait keeps spill table name from being looked at again for d (0:
// look at it at the next look).
func (e upkeep) spillWait(name string, d time.Duration) {
	e.vac.mu.Lock()
	defer e.vac.mu.Unlock()
	if d <= 0 {
		delete(e.vac.notBefore, name)
		return
	}
	if e.vac.notBefore == nil {
		e.vac.notBefore = map[string]time.Time{}
	}
	e.vac.notBefore[name] = time.Now().Add(d)
}

// spillWaiting says whether spill table name is still to wait (spillWait).
func (e upkeep) spillWaiting(name string) bool {
	e.vac.mu.Lock()
	defer e.vac.mu.Unlock()
	return time.Now().Before(e.vac.notBefore[name])
}

func spillDefaults(l driver.SpillLimits) driver.SpillLimits {
	if l.Bytes <= 0 {
		l.Bytes = 32 << 20
	}
	if l.Ratio <= 0 {
		l.Ratio = 8
	}
	if l.MaxTables <= 0 {
		l.MaxTables = 8
	}
	if l.LockWait <= 0 {
		l.LockWait = 50 * time.Millisecond
	}
	return l
}
