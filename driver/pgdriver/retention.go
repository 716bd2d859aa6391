package pgdriver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// partitionPrefix starts the name of every day partition of the archive
// (…_20260114) and of every month partition (…_202601, ArchiveFoldMonth).
const partitionPrefix = "skiplock_jobs_archive_"

// partitionRange answers the range of finished_at a day or month
// partition's name stands for; false for any other name.
func partitionRange(name string) (from, to time.Time, ok bool) {
	s, found := strings.CutPrefix(name, partitionPrefix)
	if !found || strings.Trim(s, "0123456789") != "" {
		return from, to, false
	}
	switch len(s) {
	case 8:
		d, err := time.Parse("20060102", s)
		return d, d.Add(24 * time.Hour), err == nil
	case 6:
		m, err := time.Parse("200601", s)
		return m, m.AddDate(0, 1, 0), err == nil
	}
	return from, to, false
}

// detachLockTimeout bounds the wait for the archive's lock when detaching a
// partition: a detach queued behind a long reader would queue every
// completion behind itself.
const detachLockTimeout = "1s"

// ArchiveSummary groups the archive's jobs finished before until and
// counts the rest; see driver.RetentionStore.
func (e executor) ArchiveSummary(ctx context.Context, now, until time.Time) (driver.ArchiveSummary, error) {
	var sum driver.ArchiveSummary
	rows, err := e.q.Query(ctx, archiveSummary.SQL, archiveSummary.Args(summaryArgs{now, until})...)
	if err != nil {
		return sum, fmt.Errorf("archive summary: %w", err)
	}
	sum.Groups, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.ArchiveGroup, error) {
		var g driver.ArchiveGroup
		var st string
		err := r.Scan(scanTime(&g.Day), &st, &g.Queue, &g.Kind, &g.Jobs, &g.Held, scanTime(&g.Oldest), scanTime(&g.Newest), &g.Bytes)
		g.State = driver.JobState(st)
		return g, err
	})
	if err == nil {
		sum.Later, sum.Estimated, err = e.archiveLater(ctx, until)
	}
	if err != nil {
		return sum, fmt.Errorf("archive summary: %w", err)
	}
	return sum, nil
}

// archiveLater counts the archived jobs finished at or after until, a UTC
// midnight, without reading the day partitions that start there or later:
// each holds its rows per page at its last vacuum or analyze times its
// pages now, as the planner estimates it. A day partition never vacuumed
// nor analyzed, a month partition that straddles until and the default
// partition are counted. It answers whether any figure is an estimate.
func (e executor) archiveLater(ctx context.Context, until time.Time) (int64, bool, error) {
	type attached struct {
		name            string
		rows            float64
		pages, pagesNow int64
	}
	rows, err := e.q.Query(ctx, q("ArchiveAttached"))
	if err != nil {
		return 0, false, err
	}
	parts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (attached, error) {
		var a attached
		return a, r.Scan(&a.name, &a.rows, &a.pages, &a.pagesNow)
	})
	if err != nil {
		return 0, false, err
	}
	var later int64
	estimated := false
	for _, p := range parts {
		from, to, ok := partitionRange(p.name)
		switch {
		case ok && !to.After(until): // grouped by the summary
		case ok && !from.Before(until) && p.pagesNow == 0:
		case ok && !from.Before(until) && p.rows >= 0 && p.pages > 0:
			later += int64(math.Round(p.rows / float64(p.pages) * float64(p.pagesNow)))
			estimated = true
		default:
			var n int64
			err := e.q.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{p.name}.Sanitize()+` WHERE finished_at >= $1`,
				until).Scan(&n)
			if err != nil {
				return 0, false, fmt.Errorf("count %s: %w", p.name, err)
			}
			later += n
		}
	}
	return later, estimated, nil
}

// ArchiveCountBefore counts part of one group; see driver.RetentionStore.
func (e executor) ArchiveCountBefore(ctx context.Context, g driver.ArchiveGroup, before, now time.Time) (driver.ArchiveGroup, error) {
	out := driver.ArchiveGroup{Day: g.Day, State: g.State, Queue: g.Queue, Kind: g.Kind}
	args := archiveCountBefore.Args(countBeforeArgs{g.Day, string(g.State), g.Queue, g.Kind,
		g.Day.Add(24 * time.Hour), before, now})
	err := e.q.QueryRow(ctx, archiveCountBefore.SQL, args...).Scan(&out.Jobs, &out.Held, scanTime(&out.Oldest), scanTime(&out.Newest), &out.Bytes)
	if err != nil {
		return out, fmt.Errorf("archive count: %w", err)
	}
	return out, nil
}

// ArchivePartitions lists the day and month partitions; see
// driver.RetentionStore.
func (e executor) ArchivePartitions(ctx context.Context) ([]driver.ArchivePartition, error) {
	rows, err := e.q.Query(ctx, q("ArchivePartitions"))
	if err != nil {
		return nil, fmt.Errorf("archive partitions: %w", err)
	}
	parts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.ArchivePartition, error) {
		var p driver.ArchivePartition
		if err := r.Scan(&p.Name, &p.Bytes, &p.Detached); err != nil {
			return p, err
		}
		var ok bool
		if p.Day, p.End, ok = partitionRange(p.Name); !ok {
			return p, fmt.Errorf("%q is not a day or month partition", p.Name)
		}
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("archive partitions: %w", err)
	}
	return parts, nil
}

// ArchiveExpired answers a page of expired jobs; see driver.RetentionStore.
func (e executor) ArchiveExpired(ctx context.Context, p driver.ExpiredParams) ([]driver.ArchivedRef, error) {
	var after int64
	if p.After != nil {
		after = p.After.ID
	}
	rows, err := e.q.Query(ctx, archiveExpired.SQL, archiveExpired.Args(expiredArgs{p.From, p.To, p.Before, p.Now, after, p.Limit})...)
	if err != nil {
		return nil, fmt.Errorf("archive expired: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.ArchivedRef, error) {
		var ref driver.ArchivedRef
		var st string
		err := r.Scan(&ref.ID, &st, &ref.Queue, &ref.Kind, scanTime(&ref.FinishedAt))
		ref.State = driver.JobState(st)
		return ref, err
	})
}

// ArchiveJobs answers archived jobs by id; see driver.RetentionStore.
func (e executor) ArchiveJobs(ctx context.Context, ids []int64) ([]*driver.Job, error) {
	jobs, err := scanJobs(e.q.Query(ctx, archiveJobs.SQL, archiveJobs.Args(idsArg{ids})...))
	if err != nil {
		return nil, fmt.Errorf("archive jobs: %w", err)
	}
	return jobs, nil
}

// ArchiveRange answers a page of archived jobs by id; see
// driver.RetentionStore.
func (e executor) ArchiveRange(ctx context.Context, p driver.RangeParams) ([]*driver.Job, error) {
	from, to := p.From, p.To
	if from.IsZero() {
		from = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if to.IsZero() {
		to = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	var after int64
	if p.After != nil {
		after = p.After.ID
	}
	jobs, err := scanJobs(e.q.Query(ctx, archiveRange.SQL, archiveRange.Args(rangeArgs{from, to, after, p.Limit})...))
	if err != nil {
		return nil, fmt.Errorf("archive range: %w", err)
	}
	return jobs, nil
}

// ArchiveDelete deletes archived jobs; see driver.RetentionStore.
func (e executor) ArchiveDelete(ctx context.Context, jobs []driver.ArchivedRef, from, to, now time.Time) ([]int64, error) {
	ids, finished := make([]int64, len(jobs)), make([]time.Time, len(jobs))
	for i, j := range jobs {
		ids[i], finished[i] = j.ID, j.FinishedAt
	}
	rows, err := e.q.Query(ctx, retentionDelete.SQL, retentionDelete.Args(retentionDeleteArgs{ids, finished, from, to, now})...)
	if err != nil {
		return nil, fmt.Errorf("delete archived jobs: %w", err)
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("delete archived jobs: %w", err)
	}
	return gone, nil
}

// ArchiveDropPartition detaches, then drops, a day or month partition; see
// driver.RetentionStore. The detach holds the archive's lock for a moment
// (no scan); the drop that follows holds only the detached table.
func (e executor) ArchiveDropPartition(ctx context.Context, name string, now time.Time) error {
	if _, _, ok := partitionRange(name); !ok {
		return fmt.Errorf("drop archive partition: %q is not a day or month partition", name)
	}
	ident := pgx.Identifier{name}.Sanitize()
	var attached bool
	err := e.q.QueryRow(ctx, `SELECT relispartition FROM pg_class WHERE oid = to_regclass($1)`, name).Scan(&attached)
	if err == pgx.ErrNoRows {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drop archive partition %s: %w", name, err)
	}
	if attached {
		// The leftovers go first, without the archive's lock: nothing new
		// lands in a partition of a day long past.
		if _, err := e.q.Exec(ctx, "DELETE FROM skiplock_unique_keys u USING "+ident+
			" p WHERE u.job_id = p.id AND u.expires_at <= $1", now); err != nil {
			return fmt.Errorf("drop archive partition %s: keys: %w", name, err)
		}
		if _, err := e.q.Exec(ctx, "DELETE FROM skiplock_job_deps d USING "+ident+" p WHERE d.job_id = p.id"); err != nil {
			return fmt.Errorf("drop archive partition %s: dependencies: %w", name, err)
		}
		err := e.inTx(ctx, func(tx executor) error {
			if _, err := tx.q.Exec(ctx, "SET LOCAL lock_timeout = '"+detachLockTimeout+"'"); err != nil {
				return err
			}
			_, err := tx.q.Exec(ctx, "ALTER TABLE skiplock_jobs_archive DETACH PARTITION "+ident)
			return err
		})
		if err != nil {
			return fmt.Errorf("detach archive partition %s: %w", name, err)
		}
	}
	if _, err := e.q.Exec(ctx, "DROP TABLE IF EXISTS "+ident); err != nil {
		return fmt.Errorf("drop archive partition %s: %w", name, err)
	}
	return nil
}

// JanitorRunSave records a run and trims the oldest; see
// driver.RetentionStore.
func (e executor) JanitorRunSave(ctx context.Context, r *driver.JanitorRun) (int64, error) {
	byState, err := json.Marshal(orEmpty(r.ByState))
	if err != nil {
		return 0, err
	}
	var id int64
	err = e.inTx(ctx, func(tx executor) error {
		args := janitorRunSave.Args(janitorRunArgs{r.StartedAt, r.FinishedAt, r.Runner, r.DryRun, r.Forced,
			r.Outcome, r.Message, r.Jobs, string(byState), r.Partitions, r.Bytes, r.Vaulted})
		err := tx.q.QueryRow(ctx, janitorRunSave.SQL, args...).Scan(&id)
		if err != nil {
			return err
		}
		_, err = tx.q.Exec(ctx, janitorRunTrim.SQL, janitorRunTrim.Args(keepArg{driver.JanitorRunsKept})...)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("record janitor run: %w", err)
	}
	return id, nil
}

// JanitorRunList answers the newest runs; see driver.RetentionStore.
func (e executor) JanitorRunList(ctx context.Context, limit int) ([]*driver.JanitorRun, error) {
	rows, err := e.q.Query(ctx, janitorRunList.SQL, janitorRunList.Args(limitArg{limit})...)
	if err != nil {
		return nil, fmt.Errorf("list janitor runs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*driver.JanitorRun, error) {
		r := &driver.JanitorRun{}
		var byState []byte
		err := row.Scan(&r.ID, scanTime(&r.StartedAt), scanTime(&r.FinishedAt), &r.Runner, &r.DryRun, &r.Forced, &r.Outcome,
			&r.Message, &r.Jobs, &byState, &r.Partitions, &r.Bytes, &r.Vaulted)
		if err != nil {
			return nil, err
		}
		return r, json.Unmarshal(byState, &r.ByState)
	})
}

func orEmpty(m map[driver.JobState]int64) map[driver.JobState]int64 {
	if m == nil {
		return map[driver.JobState]int64{}
	}
	return m
}

var (
	archiveSummary     = bind[summaryArgs]("ArchiveSummary")
	archiveCountBefore = bind[countBeforeArgs]("ArchiveCountBefore")
	archiveExpired     = bind[expiredArgs]("ArchiveExpired")
	archiveJobs        = bind[idsArg]("ArchiveJobs")
	archiveRange       = bind[rangeArgs]("ArchiveRange")
	retentionDelete    = bind[retentionDeleteArgs]("RetentionDelete")
	janitorRunSave     = bind[janitorRunArgs]("JanitorRunSave")
	janitorRunTrim     = bind[keepArg]("JanitorRunTrim")
	janitorRunList     = bind[limitArg]("JanitorRunList")
)

// summaryArgs: Now is the time a window key is open at.
type summaryArgs struct {
	Now   time.Time `sql:"now"`
	Until time.Time `sql:"until"`
}

type countBeforeArgs struct {
	Day    time.Time `sql:"day"`
	State  string    `sql:"state"`
	Queue  string    `sql:"queue"`
	Kind   string    `sql:"kind"`
	DayEnd time.Time `sql:"day_end"`
	Before time.Time `sql:"before"`
	Now    time.Time `sql:"now"`
}

type expiredArgs struct {
	From   time.Time `sql:"from"`
	To     time.Time `sql:"to"`
	Before time.Time `sql:"before"`
	Now    time.Time `sql:"now"`
	After  int64     `sql:"after"`
	Limit  int       `sql:"limit"`
}

type rangeArgs struct {
	From  time.Time `sql:"from"`
	To    time.Time `sql:"to"`
	After int64     `sql:"after"`
	Limit int       `sql:"limit"`
}

type retentionDeleteArgs struct {
	IDs      []int64     `sql:"ids"`
	Finished []time.Time `sql:"finished"`
	From     time.Time   `sql:"from"`
	To       time.Time   `sql:"to"`
	Now      time.Time   `sql:"now"`
}

type janitorRunArgs struct {
	StartedAt  time.Time `sql:"started_at"`
	FinishedAt time.Time `sql:"finished_at"`
	Runner     string    `sql:"runner"`
	DryRun     bool      `sql:"dry_run"`
	Forced     bool      `sql:"forced"`
	Outcome    string    `sql:"outcome"`
	Message    string    `sql:"message"`
	Jobs       int64     `sql:"jobs"`
	ByState    string    `sql:"by_state"`
	Partitions int       `sql:"partitions"`
	Bytes      int64     `sql:"bytes"`
	Vaulted    int64     `sql:"vaulted"`
}

type keepArg struct {
	Keep int `sql:"keep"`
}
