package pgdriver_test

import (
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestPromoteSettlesWhatTheEagerPathMissed: the scheduler's pass is the
// safety net behind a completion's own settling of dependencies. It
// releases a waiting job whose dependency links are gone, and settles a
// link whose parent has finished; with neither it has nothing to do.
func TestPromoteSettlesWhatTheEagerPathMissed(t *testing.T) {
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	promote := func() {
		t.Helper()
		if _, err := d.JobPromoteScheduled(ctx, 100, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	state := func(id int64) driver.JobState {
		t.Helper()
		j, err := d.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j.State
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := d.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	promote() // no link, no waiting job

	// A parent that has run to completion, archived.
	_, ids := insertFast(t, d, 4, func(i int, p *driver.InsertParams) { p.Kind = []string{"parent", "a", "b", "c"}[i] })
	parent, orphan, child, paused := ids[0], ids[1], ids[2], ids[3]
	claimed, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 1, Kinds: []string{"parent"}, DefaultLease: time.Minute})
	if err != nil || len(claimed) != 1 || claimed[0].ID != parent {
		t.Fatalf("claim the parent: %v %v", claimed, err)
	}
	if _, err := d.JobCompleteMany(ctx, []driver.CompleteParams{{HeldJob: driver.HeldJob{ID: parent, Attempt: 1, WorkerID: "w"}}}); err != nil {
		t.Fatal(err)
	}
	if st := state(parent); st != driver.StateCompleted {
		t.Fatalf("parent %s, want completed", st)
	}

	// A waiting job whose links are gone, as if its release were missed.
	exec(`UPDATE skiplock_jobs SET state = 'waiting' WHERE id = $1`, orphan)
	promote()
	if st := state(orphan); st != driver.StatePending {
		t.Fatalf("a waiting job without links: %s after the pass, want pending", st)
	}

	// A paused job's link to the finished parent (no job waits): the link
	// goes, the job stays paused.
	exec(`UPDATE skiplock_jobs SET state = 'paused' WHERE id = $1`, paused)
	exec(`INSERT INTO skiplock_job_deps (job_id, parent_id) VALUES ($1, $2)`, paused, parent)
	promote()
	var links int
	if err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM skiplock_job_deps`).Scan(&links); err != nil || links != 0 {
		t.Fatalf("%d links of a paused job left after the pass (%v), want 0", links, err)
	}
	if st := state(paused); st != driver.StatePaused {
		t.Fatalf("a paused dependent: %s after the pass, want paused", st)
	}

	// A link to the finished parent that its completion did not settle.
	exec(`UPDATE skiplock_jobs SET state = 'waiting' WHERE id = $1`, child)
	exec(`INSERT INTO skiplock_job_deps (job_id, parent_id) VALUES ($1, $2)`, child, parent)
	promote()
	if st := state(child); st != driver.StatePending {
		t.Fatalf("a job waiting on a completed parent: %s after the pass, want pending", st)
	}
	if err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM skiplock_job_deps`).Scan(&links); err != nil || links != 0 {
		t.Fatalf("%d links left after the pass (%v), want 0", links, err)
	}
}
