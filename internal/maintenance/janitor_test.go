package maintenance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// TestJanitorRetentionBoundaries: a job one second inside its state's
// retention stays, one second outside it goes; a rule for a queue
// overrides its state's retention; live jobs are never touched.
func TestJanitorRetentionBoundaries(t *testing.T) {
	t.Parallel()
	eachDB(t, func(db *janitorDB) {
		done := db.finish(driver.StateCompleted, "default", "k")
		failed := db.finish(driver.StateFailed, "default", "k")
		cancelled := db.finish(driver.StateCancelled, "default", "k")
		short := db.finish(driver.StateCompleted, "short", "k")
		live := db.insert("default", "k", false)
		var now time.Time
		j := db.janitor(&now)
		j.Floor = time.Minute
		j.Policy.Rules = []RetentionRule{{State: driver.StateCompleted, Queue: "short", Keep: time.Hour}}
		j.Policy.Keep[driver.StateCancelled] = 20 * day
		step := func(at time.Time, gone ...*driver.Job) {
			db.t.Helper()
			now = at
			dry := db.run(j, RunOptions{DryRun: true})
			rep := db.run(j, RunOptions{})
			if rep.Run.Jobs != int64(len(gone)) || dry.Run.Jobs != rep.Run.Jobs {
				db.t.Fatalf("at %s: deleted %d (dry run said %d), want %d: %+v", at, rep.Run.Jobs, dry.Run.Jobs, len(gone), dry.Groups)
			}
			for _, g := range gone {
				if db.exists(g.ID) {
					db.t.Fatalf("at %s: job %d (%s, queue %s) still there", at, g.ID, g.State, g.Queue)
				}
			}
			if !db.exists(live.ID) {
				db.t.Fatalf("live job %d deleted", live.ID)
			}
		}
		step(short.FinishedAt.Add(time.Hour - time.Second))
		step(short.FinishedAt.Add(time.Hour+time.Second), short)
		step(done.FinishedAt.Add(7*day - time.Second))
		step(done.FinishedAt.Add(7*day+time.Second), done)
		step(cancelled.FinishedAt.Add(20*day - time.Second))
		step(cancelled.FinishedAt.Add(20*day+time.Second), cancelled)
		step(failed.FinishedAt.Add(30*day - time.Second))
		step(failed.FinishedAt.Add(30*day+time.Second), failed)
		if !db.exists(live.ID) || db.archived() != 0 {
			db.t.Fatalf("after every run: live job there %v, archive %d jobs", db.exists(live.ID), db.archived())
		}
	})
}

// TestJanitorDryRunChangesNothing: a dry run reports what would go, by
// state, queue and day, deletes nothing and is recorded as a dry run.
func TestJanitorDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	eachDB(t, func(db *janitorDB) {
		var ids []int64
		for _, s := range []driver.JobState{driver.StateCompleted, driver.StateCompleted, driver.StateFailed} {
			ids = append(ids, db.finish(s, "q", "k").ID)
		}
		db.backdate(40 * day)
		parts := db.partitions()
		now := time.Now()
		rep := db.run(db.janitor(&now), RunOptions{DryRun: true})
		if rep.Run.Jobs != 3 || rep.Run.ByState[driver.StateCompleted] != 2 || rep.Run.ByState[driver.StateFailed] != 1 {
			db.t.Fatalf("dry run: %+v, want 2 completed and 1 failed", rep.Run)
		}
		var grouped int64
		for _, g := range rep.Groups {
			if g.Queue != "q" || g.Day.After(now.Add(-39*day)) || g.Bytes <= 0 {
				db.t.Fatalf("dry run group %+v", g)
			}
			grouped += g.Jobs
		}
		if grouped != 3 || rep.Archived != 3 {
			db.t.Fatalf("dry run groups count %d jobs of %d archived, want 3 of 3", grouped, rep.Archived)
		}
		if db.pg && len(rep.Partitions) == 0 {
			db.t.Fatalf("dry run on PostgreSQL names no partition to drop")
		}
		for _, id := range ids {
			if !db.exists(id) {
				db.t.Fatalf("dry run deleted job %d", id)
			}
		}
		if after := db.partitions(); len(after) != len(parts) {
			db.t.Fatalf("dry run dropped partitions: %v → %v", parts, after)
		}
		runs, err := db.drv.JanitorRunList(db.ctx, 10)
		if err != nil || len(runs) != 1 || !runs[0].DryRun || runs[0].Jobs != 3 || runs[0].Outcome != driver.JanitorOK {
			db.t.Fatalf("recorded runs %+v, %v; want the one dry run", runs, err)
		}
	})
}

// TestJanitorSafetyRefuses: a run that would delete more than the safety
// share of the archive, or jobs newer than the floor, is refused and
// deletes nothing unless forced.
func TestJanitorSafetyRefuses(t *testing.T) {
	t.Parallel()
	eachDB(t, func(db *janitorDB) {
		var ids []int64
		for range 4 {
			ids = append(ids, db.finish(driver.StateCompleted, "q", "k").ID)
		}
		now := time.Now().Add(8 * day)
		j := db.janitor(&now)
		j.MinShareJobs = 1
		rep, err := j.RunOnce(db.ctx, RunOptions{})
		if !errors.Is(err, ErrRefused) || rep.Run.Outcome != driver.JanitorRefused {
			db.t.Fatalf("share: %v, outcome %q; want refused", err, rep.Run.Outcome)
		}
		for _, id := range ids {
			if !db.exists(id) {
				db.t.Fatalf("a refused run deleted job %d", id)
			}
		}
		now = time.Now().Add(2 * time.Minute)
		j.MinShareJobs = 0
		j.Policy.Keep[driver.StateCompleted] = time.Minute
		j.Floor = time.Hour
		if _, err := j.RunOnce(db.ctx, RunOptions{}); !errors.Is(err, ErrRefused) || !db.exists(ids[0]) {
			db.t.Fatalf("floor: %v, job there %v; want refused and kept", err, db.exists(ids[0]))
		}
		if rep := db.run(j, RunOptions{Force: true}); rep.Run.Jobs != 4 || !rep.Run.Forced {
			db.t.Fatalf("forced: %+v, want 4 jobs deleted", rep.Run)
		}
		runs, err := db.drv.JanitorRunList(db.ctx, 10)
		if err != nil || len(runs) != 3 || runs[2].Outcome != driver.JanitorRefused || runs[0].Outcome != driver.JanitorOK {
			db.t.Fatalf("recorded runs %v: %+v", err, runs)
		}
	})
}

// fakeVault records what it stores; it fails while failing is set.
type fakeVault struct {
	mu      sync.Mutex
	ids     []int64
	failing bool
}

func (v *fakeVault) Store(ctx context.Context, jobs []*driver.Job) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.failing {
		return 0, errors.New("bucket unreachable")
	}
	for _, j := range jobs {
		v.ids = append(v.ids, j.ID)
	}
	return len(jobs), nil
}

// TestJanitorDeletesOnlyWhatTheVaultStored: with a vault that fails,
// nothing is deleted and the run fails; once it stores, exactly the jobs
// it stored are deleted, whole partitions included.
func TestJanitorDeletesOnlyWhatTheVaultStored(t *testing.T) {
	t.Parallel()
	eachDB(t, func(db *janitorDB) {
		var old []int64
		for range 5 {
			old = append(old, db.finish(driver.StateCompleted, "q", "k").ID)
		}
		db.backdate(10 * day)
		recent := db.finish(driver.StateFailed, "q", "k")
		now := time.Now()
		v := &fakeVault{failing: true}
		j := db.janitor(&now)
		j.Vault, j.BatchSize = v, 2
		rep, err := j.RunOnce(db.ctx, RunOptions{})
		if err == nil || rep.Run.Outcome != driver.JanitorFailed || db.archived() != 6 {
			db.t.Fatalf("failing vault: %v, outcome %q, archive %d; want failed and 6 kept", err, rep.Run.Outcome, db.archived())
		}
		v.failing = false
		rep = db.run(j, RunOptions{})
		slices.Sort(v.ids)
		if !slices.Equal(slices.Compact(v.ids), old) || rep.Run.Jobs != 5 || rep.Run.Vaulted < 5 {
			db.t.Fatalf("vault holds %v, run %+v; want %v", v.ids, rep.Run, old)
		}
		if !db.exists(recent.ID) || db.archived() != 1 {
			db.t.Fatalf("after the run: recent job there %v, archive %d", db.exists(recent.ID), db.archived())
		}
	})
}

// TestJanitorKeepsHeldJobs: a finished job whose window key is still open
// stays past its retention (deleting it would leave the key naming no
// job); once the key expires, the job and its key go together.
func TestJanitorKeepsHeldJobs(t *testing.T) {
	t.Parallel()
	eachDB(t, func(db *janitorDB) {
		res, err := db.drv.JobInsertMany(db.ctx, []*driver.InsertParams{{Kind: "k", Queue: "q", Priority: 5,
			IdempotencyKey: "key", UniquePolicy: "window", UniqueWindow: 10 * day, Paused: true}})
		if err != nil {
			db.t.Fatal(err)
		}
		if _, err := db.drv.JobCancel(db.ctx, res[0].Job.ID); err != nil {
			db.t.Fatal(err)
		}
		now := time.Now().Add(9 * day)
		j := db.janitor(&now)
		j.Policy.Keep[driver.StateCancelled] = 7 * day
		if rep := db.run(j, RunOptions{}); rep.Run.Jobs != 0 || rep.Held != 1 || !db.exists(res[0].Job.ID) {
			db.t.Fatalf("inside the key's window: %+v, held %d", rep.Run, rep.Held)
		}
		now = time.Now().Add(11 * day)
		if rep := db.run(j, RunOptions{}); rep.Run.Jobs != 1 || db.exists(res[0].Job.ID) {
			db.t.Fatalf("past the key's window: %+v", rep.Run)
		}
		again, err := db.drv.JobInsertMany(db.ctx, []*driver.InsertParams{{Kind: "k", Queue: "q", Priority: 5,
			IdempotencyKey: "key", UniquePolicy: "window", UniqueWindow: 10 * day}})
		if err != nil || again[0].Duplicate {
			db.t.Fatalf("insert under the freed key: %+v, %v", again, err)
		}
	})
}

// TestJanitorPurgeUnderConcurrentClaimsAndCompletions: while the janitor
// deletes old jobs (dropping their day partitions on PostgreSQL), workers
// keep claiming and completing: every one of their jobs completes and
// stays, and every old job goes.
func TestJanitorPurgeUnderConcurrentClaimsAndCompletions(t *testing.T) {
	t.Parallel()
	eachDB(t, func(db *janitorDB) {
		const old, fresh = 1200, 300
		oldIDs := db.completeMany("old", old)
		db.backdate(20 * day)
		before := db.partitions()
		for range fresh {
			db.insert("live", "k", false)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		var finished []int64
		wg.Go(func() {
			for len(finished) < fresh {
				jobs, err := db.drv.JobClaim(db.ctx, driver.ClaimParams{Queue: "live", WorkerID: "w", Max: 10,
					DefaultLease: time.Minute})
				if err != nil {
					errs <- err
					return
				}
				var done []driver.CompleteParams
				for _, j := range jobs {
					done = append(done, driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt,
						WorkerID: j.WorkerID}})
				}
				ids, err := db.drv.JobCompleteMany(db.ctx, done)
				if err != nil || len(ids) != len(done) {
					errs <- errors.Join(err, errors.New("a completion was refused"))
					return
				}
				finished = append(finished, driver.CompletedIDs(ids)...)
			}
		})
		now := time.Now()
		j := db.janitor(&now)
		j.BatchSize, j.PageSize = 50, 200
		var rep *driver.JanitorReport
		wg.Go(func() {
			var err error
			if rep, err = j.RunOnce(db.ctx, RunOptions{Force: true}); err != nil {
				errs <- err
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			db.t.Fatal(err)
		}
		if rep.Run.Jobs != old {
			db.t.Fatalf("purged %d jobs, want %d", rep.Run.Jobs, old)
		}
		for _, id := range oldIDs[:10] {
			if db.exists(id) {
				db.t.Fatalf("old job %d still there", id)
			}
		}
		for _, id := range finished {
			if j := db.get(id); j.State != driver.StateCompleted {
				db.t.Fatalf("job %d: %s, want completed", id, j.State)
			}
		}
		if db.archived() != fresh {
			db.t.Fatalf("archive holds %d jobs, want the %d fresh ones", db.archived(), fresh)
		}
		if db.pg && (len(rep.Partitions) == 0 || len(db.partitions()) >= len(before)) {
			db.t.Fatalf("partitions %v → %v, dropped %v; want the old day dropped", before, db.partitions(), rep.Partitions)
		}
	})
}

// TestJanitorCountsTheRecentDaysWithoutGroupingThem: a run groups only the
// days that hold jobs past the shortest retention; the days after them are
// counted into the archive's size (exactly, or on PostgreSQL by the
// planner's estimate once a partition has one) but never grouped.
func TestJanitorCountsTheRecentDaysWithoutGroupingThem(t *testing.T) {
	t.Parallel()
	eachDB(t, func(db *janitorDB) {
		db.completeMany("q", 3)
		db.backdate(10 * day)
		db.completeMany("q", 5)
		now := time.Now()
		j := db.janitor(&now)
		check := func(estimated bool) {
			db.t.Helper()
			rep := db.run(j, RunOptions{DryRun: true})
			if rep.Run.Jobs != 3 || rep.Archived != 8 || rep.ArchivedEstimated != estimated {
				db.t.Fatalf("dry run: %d of %d archived (estimated %v), want 3 of 8 (estimated %v)",
					rep.Run.Jobs, rep.Archived, rep.ArchivedEstimated, estimated)
			}
			for _, g := range rep.Groups {
				if g.Day.After(now.Add(-9 * day)) {
					db.t.Fatalf("dry run grouped a recent day: %+v", g)
				}
			}
		}
		check(false)
		if db.pg {
			db.exec(`ANALYZE skiplock_jobs_archive`)
			check(true)
		}
		if rep := db.run(j, RunOptions{}); rep.Run.Jobs != 3 || db.archived() != 5 {
			db.t.Fatalf("run: deleted %d, %d archived after; want 3 and 5", rep.Run.Jobs, db.archived())
		}
	})
}
