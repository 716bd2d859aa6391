package maintenance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// janitorDB is a migrated database of either driver, with what the tests
// of the janitor need beyond the driver.
type janitorDB struct {
	t   *testing.T
	ctx context.Context
	drv driver.FullDriver
	// exec runs a statement of the database's own dialect.
	exec func(sql string)
	pg   bool
}

// eachDB runs fn on SQLite and on PostgreSQL.
func eachDB(t *testing.T, fn func(db *janitorDB)) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			db := &janitorDB{t: t, ctx: ctx}
			if name == "sqlite" {
				d := sqlitetest.New(t)
				db.drv = d
				db.exec = func(s string) {
					if _, err := d.DB().ExecContext(ctx, s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
			} else {
				d, _ := pgtest.Schema(t)
				db.drv, db.pg = d, true
				db.exec = func(s string) {
					if _, err := d.Pool().Exec(ctx, s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
				if err := d.ArchivePrepare(ctx, time.Now().Add(24*time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			fn(db)
		})
	}
}

func (db *janitorDB) insert(queue, kind string, paused bool) *driver.Job {
	db.t.Helper()
	res, err := db.drv.JobInsertMany(db.ctx, []*driver.InsertParams{{Kind: kind, Queue: queue, Priority: 5,
		MaxRetries: 0, Paused: paused}})
	if err != nil {
		db.t.Fatal(err)
	}
	return res[0].Job
}

func (db *janitorDB) claim(queue string) *driver.Job {
	db.t.Helper()
	jobs, err := db.drv.JobClaim(db.ctx, driver.ClaimParams{Queue: queue, WorkerID: "w", Max: 1,
		DefaultLease: time.Minute})
	if err != nil || len(jobs) != 1 {
		db.t.Fatalf("claim in %s: %d jobs, %v", queue, len(jobs), err)
	}
	return jobs[0]
}

// finish makes a finished job of state in queue and answers it as archived.
func (db *janitorDB) finish(state driver.JobState, queue, kind string) *driver.Job {
	db.t.Helper()
	switch state {
	case driver.StateCompleted:
		db.insert(queue, kind, false)
		j := db.claim(queue)
		held := driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: j.WorkerID}
		if _, err := db.drv.JobCompleteMany(db.ctx, []driver.CompleteParams{{HeldJob: held}}); err != nil {
			db.t.Fatal(err)
		}
		return db.get(j.ID)
	case driver.StateFailed:
		db.insert(queue, kind, false)
		j := db.claim(queue)
		held := driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: j.WorkerID}
		if _, err := outcome.FailJob(db.ctx, db.drv, driver.FailParams{HeldJob: held,
			Error: driver.AttemptError{Type: "test", Message: "boom"}}); err != nil {
			db.t.Fatal(err)
		}
		return db.get(j.ID)
	default:
		j := db.insert(queue, kind, true)
		if _, err := db.drv.JobCancel(db.ctx, j.ID); err != nil {
			db.t.Fatal(err)
		}
		return db.get(j.ID)
	}
}

// completeMany makes n completed jobs in queue and answers their ids.
func (db *janitorDB) completeMany(queue string, n int) []int64 {
	db.t.Helper()
	ps := make([]*driver.InsertParams, n)
	for i := range ps {
		ps[i] = &driver.InsertParams{Kind: "k", Queue: queue, Priority: 5}
	}
	if _, err := db.drv.JobInsertMany(db.ctx, ps); err != nil {
		db.t.Fatal(err)
	}
	var ids []int64
	for len(ids) < n {
		jobs, err := db.drv.JobClaim(db.ctx, driver.ClaimParams{Queue: queue, WorkerID: "w", Max: 100,
			DefaultLease: time.Minute})
		if err != nil || len(jobs) == 0 {
			db.t.Fatalf("claim: %d jobs, %v", len(jobs), err)
		}
		done := make([]driver.CompleteParams, len(jobs))
		for i, j := range jobs {
			done[i] = driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: j.WorkerID}}
		}
		got, err := db.drv.JobCompleteMany(db.ctx, done)
		if err != nil {
			db.t.Fatal(err)
		}
		ids = append(ids, driver.CompletedIDs(got)...)
	}
	return ids
}

func (db *janitorDB) get(id int64) *driver.Job {
	db.t.Helper()
	j, err := db.drv.JobGet(db.ctx, id)
	if err != nil {
		db.t.Fatalf("job %d: %v", id, err)
	}
	return j
}

// exists answers whether job id is still stored, live or archived.
func (db *janitorDB) exists(id int64) bool {
	db.t.Helper()
	_, err := db.drv.JobGet(db.ctx, id)
	if err != nil && err != driver.ErrNotFound {
		db.t.Fatalf("job %d: %v", id, err)
	}
	return err == nil
}

// archived counts the archive's jobs.
func (db *janitorDB) archived() int64 {
	db.t.Helper()
	sum, err := db.drv.ArchiveSummary(db.ctx, time.Now(), time.Now().Add(400*day).Truncate(day))
	if err != nil || sum.Later != 0 {
		db.t.Fatalf("summary: %d jobs after its bound, %v", sum.Later, err)
	}
	var n int64
	for _, g := range sum.Groups {
		n += g.Jobs
	}
	return n
}

// backdate moves every archived job's finished_at back by d (into a day
// partition made for it on PostgreSQL).
func (db *janitorDB) backdate(d time.Duration) {
	db.t.Helper()
	if !db.pg {
		db.exec(fmt.Sprintf(`UPDATE skiplock_jobs_archive SET finished_at = finished_at - %d`, d.Microseconds()))
		return
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for day := today.Add(-d - 24*time.Hour); !day.After(today.Add(-d + 24*time.Hour)); day = day.Add(24 * time.Hour) {
		db.exec(fmt.Sprintf(`CREATE TABLE IF NOT EXISTS skiplock_jobs_archive_%s PARTITION OF skiplock_jobs_archive
			FOR VALUES FROM ('%s') TO ('%s')`, day.Format("20060102"), day.Format(time.RFC3339),
			day.Add(24*time.Hour).Format(time.RFC3339)))
	}
	db.exec(fmt.Sprintf(`UPDATE skiplock_jobs_archive SET finished_at = finished_at - interval '%d seconds'`,
		int64(d.Seconds())))
}

// partitions answers the names of the archive's day partitions.
func (db *janitorDB) partitions() map[string]bool {
	db.t.Helper()
	parts, err := db.drv.ArchivePartitions(db.ctx)
	if err != nil {
		db.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range parts {
		out[p.Name] = true
	}
	return out
}

// janitor answers a janitor on db with the default retention and the
// clock at *now.
func (db *janitorDB) janitor(now *time.Time) *Janitor {
	return &Janitor{Store: db.drv, Runner: "test", Now: func() time.Time { return *now },
		Policy: Policy{Keep: map[driver.JobState]time.Duration{
			driver.StateCompleted: 7 * day, driver.StateFailed: 30 * day, driver.StateCancelled: 30 * day}}}
}

func (db *janitorDB) run(j *Janitor, opts RunOptions) *driver.JanitorReport {
	db.t.Helper()
	rep, err := j.RunOnce(db.ctx, opts)
	if err != nil {
		db.t.Fatalf("janitor run: %v", err)
	}
	return rep
}
