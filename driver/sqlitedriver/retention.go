package sqlitedriver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// ArchiveSummary groups the archive's older jobs and counts the rest; see
// driver.RetentionStore. It reads on the reader pool: the writer, and the
// claims behind it, never wait.
func (e executor) ArchiveSummary(ctx context.Context, now, until time.Time) (driver.ArchiveSummary, error) {
	var sum driver.ArchiveSummary
	var err error
	sum.Groups, err = collect(func(s scanner) (driver.ArchiveGroup, error) {
		var g driver.ArchiveGroup
		var st string
		var day, oldest, newest storedMicros
		err := s.Scan(&day, &st, &g.Queue, &g.Kind, &g.Jobs, &g.Held, &oldest, &newest, &g.Bytes)
		g.Day, g.State, g.Oldest, g.Newest = day.time(), driver.JobState(st), oldest.time(), newest.time()
		return g, err
	})(e.rquery(ctx, "ArchiveSummary", sql.Named("now", now.UnixMicro()), sql.Named("until", until.UnixMicro())))
	if err == nil {
		err = e.r.QueryRowContext(ctx, q("ArchiveCountLater"),
			named("ArchiveCountLater", sql.Named("until", until.UnixMicro()))...).Scan(&sum.Later)
	}
	if err != nil {
		return sum, fmt.Errorf("archive summary: %w", err)
	}
	return sum, nil
}

// ArchiveCountBefore counts part of one group; see driver.RetentionStore.
func (e executor) ArchiveCountBefore(ctx context.Context, g driver.ArchiveGroup, before, now time.Time) (driver.ArchiveGroup, error) {
	out := driver.ArchiveGroup{Day: g.Day, State: g.State, Queue: g.Queue, Kind: g.Kind}
	rows, err := e.rquery(ctx, "ArchiveCountBefore", sql.Named("from", g.Day.UnixMicro()),
		sql.Named("to", g.Day.Add(24*time.Hour).UnixMicro()), sql.Named("before", before.UnixMicro()),
		sql.Named("now", now.UnixMicro()), sql.Named("state", string(g.State)), sql.Named("queue", g.Queue),
		sql.Named("kind", g.Kind))
	if err != nil {
		return out, fmt.Errorf("archive count: %w", err)
	}
	defer rows.Close()
	var oldest, newest storedMicros
	if rows.Next() {
		err = rows.Scan(&out.Jobs, &out.Held, &oldest, &newest, &out.Bytes)
	}
	if err == nil {
		err = rows.Err()
	}
	out.Oldest, out.Newest = oldest.time(), newest.time()
	if err != nil {
		return out, fmt.Errorf("archive count: %w", err)
	}
	return out, nil
}

// ArchivePartitions answers none: the SQLite archive is one plain table.
func (e executor) ArchivePartitions(ctx context.Context) ([]driver.ArchivePartition, error) {
	return nil, nil
}

// ArchiveDropPartition refuses: the SQLite archive has no partitions.
func (e executor) ArchiveDropPartition(ctx context.Context, name string, now time.Time) error {
	return fmt.Errorf("drop archive partition %q: the SQLite archive has no partitions", name)
}

// ArchiveFoldMonth refuses: the SQLite archive has no partitions.
func (e executor) ArchiveFoldMonth(ctx context.Context, month time.Time, maxJobs int64) (driver.ArchiveFold, error) {
	return driver.ArchiveFold{}, fmt.Errorf("fold archive month %s: the SQLite archive has no partitions",
		month.Format("2006-01"))
}

// ArchiveExpired answers a page of expired jobs along the finished_at
// index, on the reader pool; see driver.RetentionStore.
func (e executor) ArchiveExpired(ctx context.Context, p driver.ExpiredParams) ([]driver.ArchivedRef, error) {
	afterFinished, afterID := int64(math.MinInt64), int64(0)
	if p.After != nil {
		afterFinished, afterID = p.After.FinishedAt.UnixMicro(), p.After.ID
	}
	refs, err := collect(func(s scanner) (driver.ArchivedRef, error) {
		var r driver.ArchivedRef
		var st string
		var finished storedMicros
		err := s.Scan(&r.ID, &st, &r.Queue, &r.Kind, &finished)
		r.State, r.FinishedAt = driver.JobState(st), finished.time()
		return r, err
	})(e.rquery(ctx, "ArchiveExpired", sql.Named("from", p.From.UnixMicro()),
		sql.Named("to", p.To.UnixMicro()), sql.Named("before", p.Before.UnixMicro()),
		sql.Named("now", p.Now.UnixMicro()), sql.Named("after_finished", afterFinished),
		sql.Named("after_id", afterID), sql.Named("limit", p.Limit)))
	if err != nil {
		return nil, fmt.Errorf("archive expired: %w", err)
	}
	return refs, nil
}

// ArchiveJobs answers archived jobs by id; see driver.RetentionStore.
func (e executor) ArchiveJobs(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	jobs, err := scanJobs(e.rquery(ctx, "ArchiveJobs", sql.Named("ids", jsonText(ids))))
	if err != nil {
		return nil, fmt.Errorf("archive jobs: %w", err)
	}
	return jobs, nil
}

// ArchiveRange answers a page of archived jobs along the finished_at
// index, on the reader pool; see driver.RetentionStore.
func (e executor) ArchiveRange(ctx context.Context, p driver.RangeParams) ([]*driver.Job, error) {
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !p.From.IsZero() {
		from = p.From.UnixMicro()
	}
	if !p.To.IsZero() {
		to = p.To.UnixMicro()
	}
	afterFinished, afterID := int64(math.MinInt64), int64(0)
	if p.After != nil {
		afterFinished, afterID = p.After.FinishedAt.UnixMicro(), p.After.ID
	}
	jobs, err := scanJobs(e.rquery(ctx, "ArchiveRange", sql.Named("from", from), sql.Named("to", to),
		sql.Named("after_finished", afterFinished), sql.Named("after_id", afterID), sql.Named("limit", p.Limit)))
	if err != nil {
		return nil, fmt.Errorf("archive range: %w", err)
	}
	return jobs, nil
}

// ArchiveDelete deletes archived jobs; see driver.RetentionStore and
// purge.go. In a caller's transaction it deletes them there.
func (e executor) ArchiveDelete(ctx context.Context, jobs []driver.ArchivedRef, from, to, now time.Time) ([]int64, error) {
	if e.tx == nil {
		return e.purge(ctx, jobs, from, to, now)
	}
	var gone []int64
	err := e.inTx(ctx, func(tx executor) (err error) {
		gone, err = tx.deleteArchived(ctx, jobs, from, to, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("delete archived jobs: %w", err)
	}
	return gone, nil
}

// deleteArchived deletes the jobs among jobs finished in [from, to) and not
// held at now, each only in the version named (its finish time), with
// their expired keys and dependency rows, in tx.
func (tx executor) deleteArchived(ctx context.Context, jobs []driver.ArchivedRef, from, to, now time.Time) ([]int64, error) {
	versions := make([][2]int64, len(jobs))
	for i, j := range jobs {
		versions[i] = [2]int64{j.ID, j.FinishedAt.UnixMicro()}
	}
	gone, err := scanIDs(tx.wquery(ctx, "RetentionDeletable", sql.Named("jobs", jsonText(versions)),
		sql.Named("from", from.UnixMicro()), sql.Named("to", to.UnixMicro()), sql.Named("now", now.UnixMicro())))
	if err != nil || len(gone) == 0 {
		return nil, err
	}
	args := []any{sql.Named("ids", jsonText(gone)), sql.Named("now", now.UnixMicro())}
	if _, err := tx.wexec(ctx, "RetentionDelete", args[0]); err != nil {
		return nil, err
	}
	if _, err := tx.wexec(ctx, "RetentionDeleteKeys", args...); err != nil {
		return nil, err
	}
	if _, err := tx.wexec(ctx, "RetentionDeleteDeps", args[0]); err != nil {
		return nil, err
	}
	return gone, nil
}

// JanitorRunSave records a run and trims the oldest; see
// driver.RetentionStore.
func (e executor) JanitorRunSave(ctx context.Context, r *driver.JanitorRun) (int64, error) {
	byState := map[driver.JobState]int64{}
	for s, n := range r.ByState {
		byState[s] = n
	}
	var id int64
	err := e.inTx(ctx, func(tx executor) error {
		rows, err := tx.wquery(ctx, "JanitorRunSave", sql.Named("started_at", r.StartedAt.UnixMicro()),
			sql.Named("finished_at", r.FinishedAt.UnixMicro()), sql.Named("runner", r.Runner),
			sql.Named("dry_run", r.DryRun), sql.Named("forced", r.Forced), sql.Named("outcome", r.Outcome),
			sql.Named("message", r.Message), sql.Named("jobs", r.Jobs), sql.Named("by_state", jsonText(byState)),
			sql.Named("partitions", r.Partitions), sql.Named("bytes", r.Bytes), sql.Named("vaulted", r.Vaulted))
		ids, err := scanIDs(rows, err)
		if err != nil {
			return err
		}
		if len(ids) == 1 {
			id = ids[0]
		}
		_, err = tx.wexec(ctx, "JanitorRunTrim", sql.Named("keep", driver.JanitorRunsKept))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("record janitor run: %w", err)
	}
	return id, nil
}

// JanitorRunList answers the newest runs; see driver.RetentionStore.
func (e executor) JanitorRunList(ctx context.Context, limit int) ([]*driver.JanitorRun, error) {
	runs, err := collect(func(s scanner) (*driver.JanitorRun, error) {
		r := &driver.JanitorRun{}
		var started, finished storedMicros
		var byState string
		err := s.Scan(&r.ID, &started, &finished, &r.Runner, &r.DryRun, &r.Forced, &r.Outcome, &r.Message,
			&r.Jobs, &byState, &r.Partitions, &r.Bytes, &r.Vaulted)
		if err != nil {
			return nil, err
		}
		r.StartedAt, r.FinishedAt = started.time(), finished.time()
		return r, json.Unmarshal([]byte(byState), &r.ByState)
	})(e.rquery(ctx, "JanitorRunList", sql.Named("limit", limit)))
	if err != nil {
		return nil, fmt.Errorf("list janitor runs: %w", err)
	}
	return runs, nil
}
