package vault

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// A job stored in the vault, then retried and finished again, is another
// version: retention must never delete the last version because the vault
// holds an earlier one, and the vault answers the last version it holds.
// Each case ends with the job's last version in the database or the vault.

// TestRetriedJobKeepsItsLastVersion: the vault holds every finished job (an
// export, a janitor run killed before it deleted, or one whose manifest
// write failed after its files landed); one failed job is retried and
// completed with a result; a janitor run then stores the new version and
// deletes only that, counting as stored only the one job it wrote.
func TestRetriedJobKeepsItsLastVersion(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db database) {
		ctx := context.Background()
		jobs := finishJobs(t, db.client, 40)
		v, _ := openDir(t)
		if _, err := v.Put(ctx, jobs); err != nil {
			t.Fatal(err)
		}
		failed := firstIn(t, jobs, skiplock.StateFailed)
		retryAndComplete(t, db.client, failed)

		rep, err := janitorOn(t, db, v).JanitorRun(ctx, skiplock.JanitorOptions{Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Run.Vaulted != 1 {
			t.Fatalf("the run says %d jobs stored in the vault, want 1 (the others it held already)", rep.Run.Vaulted)
		}
		if rep.Run.Jobs != int64(len(jobs)) {
			t.Fatalf("the run deleted %d jobs, want %d", rep.Run.Jobs, len(jobs))
		}
		assertLastVersion(t, db.client, v, failed.ID, len(jobs))
	})
}

// TestJobRetriedWhileTheJanitorStoresIt: the run has stored a job's version
// and not yet deleted it when the job is retried, (a) left pending, (b)
// completed again: the run deletes nothing but the version it stored, and
// the job's last version stays in the database.
func TestJobRetriedWhileTheJanitorStoresIt(t *testing.T) {
	for _, complete := range []bool{false, true} {
		name := map[bool]string{false: "retried", true: "retried-and-completed"}[complete]
		t.Run(name, func(t *testing.T) {
			forEachDatabase(t, func(t *testing.T, db database) {
				ctx := context.Background()
				jobs := finishJobs(t, db.client, 40)
				failed := firstIn(t, jobs, skiplock.StateFailed)
				v, _ := openDir(t)
				hooked := &storeHook{Vault: v, after: func() {
					if complete {
						retryAndComplete(t, db.client, failed)
						return
					}
					if _, err := db.client.JobRetry(ctx, failed.ID); err != nil {
						t.Fatal(err)
					}
				}}
				rep, err := janitorOn(t, db, hooked).JanitorRun(ctx, skiplock.JanitorOptions{Force: true})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Run.Jobs != int64(len(jobs)-1) {
					t.Fatalf("the run deleted %d jobs, want %d (all but the one retried)", rep.Run.Jobs, len(jobs)-1)
				}
				j, err := db.client.JobGet(ctx, failed.ID)
				if err != nil {
					t.Fatalf("job %d, retried during the run, is gone from the database: %v", failed.ID, err)
				}
				want := skiplock.StatePending
				if complete {
					want = skiplock.StateCompleted
				}
				if j.State != want {
					t.Fatalf("job %d is %s, want %s", j.ID, j.State, want)
				}
				if complete {
					// A second run stores and deletes the new version.
					if _, err := janitorOn(t, db, v).JanitorRun(ctx, skiplock.JanitorOptions{Force: true}); err != nil {
						t.Fatal(err)
					}
					assertLastVersion(t, db.client, v, failed.ID, len(jobs))
				}
			})
		})
	}
}

// TestVaultAnswersTheLatestVersion: a job stored in two versions is
// answered once, in its later version, even when a query's range picks
// only the earlier one's hour (that one is then not answered at all).
func TestVaultAnswersTheLatestVersion(t *testing.T) {
	v, _ := openDir(t)
	ctx := context.Background()
	early := time.Date(2026, 1, 1, 10, 30, 0, 0, time.UTC)
	late := early.Add(3 * time.Hour)
	first := []*skiplock.JobRow{finishedAt(1, skiplock.StateFailed, early), finishedAt(2, skiplock.StateCompleted, early)}
	if _, err := v.Put(ctx, first); err != nil {
		t.Fatal(err)
	}
	again := finishedAt(1, skiplock.StateCompleted, late)
	res, err := v.Put(ctx, []*skiplock.JobRow{again, first[1]})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored != 1 || res.Held != 1 {
		t.Fatalf("stored %d held %d, want the new version stored and the same version held", res.Stored, res.Held)
	}
	all := queryAll(t, v)
	if len(all) != 2 {
		t.Fatalf("query answered %d jobs, want 2", len(all))
	}
	for _, j := range all {
		if j.ID == 1 && (j.State != skiplock.StateCompleted || !j.FinishedAt.Equal(late)) {
			t.Fatalf("job 1 answered %s finished %s, want its later version (completed at %s)", j.State, j.FinishedAt, late)
		}
	}
	var inEarlyHour []int64
	err = v.Query(ctx, QueryParams{From: early.Truncate(time.Hour), To: early.Truncate(time.Hour).Add(time.Hour)},
		func(j *skiplock.JobRow) error {
			inEarlyHour = append(inEarlyHour, j.ID)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(inEarlyHour) != 1 || inEarlyHour[0] != 2 {
		t.Fatalf("the early hour answered %v, want [2] (job 1's version there is superseded)", inEarlyHour)
	}
}

// TestOpenRemovesTemporaryFiles: the hidden files of a writer killed
// before its rename (the manifest's, a part's) are gone once the vault
// is opened again; the vault's objects stay.
func TestOpenRemovesTemporaryFiles(t *testing.T) {
	v, dir := openDir(t)
	ctx := context.Background()
	if _, err := v.Put(ctx, []*skiplock.JobRow{finishedAt(1, skiplock.StateCompleted, time.Now())}); err != nil {
		t.Fatal(err)
	}
	parts, err := filepath.Glob(filepath.Join(dir, "jobs", "date=*", "hour=*"))
	if err != nil || len(parts) != 1 {
		t.Fatalf("hour directories %v (%v), want 1", parts, err)
	}
	left := []string{filepath.Join(dir, "._manifest.json.tmp-123"), filepath.Join(parts[0], ".part-1-1-ab.parquet.tmp-9")}
	for _, p := range left {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v2, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range left {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s is still there after open (%v)", p, err)
		}
	}
	if got := queryAll(t, v2); len(got) != 1 {
		t.Fatalf("the vault answers %d jobs after the sweep, want 1", len(got))
	}
}

// storeHook is a vault that calls after once its first Store returns.
type storeHook struct {
	*Vault
	after func()
	done  bool
}

func (h *storeHook) Store(ctx context.Context, jobs []*skiplock.JobRow) (int, error) {
	n, err := h.Vault.Store(ctx, jobs)
	if err == nil && !h.done {
		h.done = true
		h.after()
	}
	return n, err
}

// janitorOn answers a client on db's database whose retention deletes any
// finished job at once, storing it in v first.
func janitorOn(t *testing.T, db database, v skiplock.Vault) *skiplock.Client {
	t.Helper()
	c, err := skiplock.NewClient(db.client.Driver(), &skiplock.Config{Vault: v, Retention: skiplock.Retention{
		Completed: time.Microsecond, Failed: time.Microsecond, Cancelled: time.Microsecond, Floor: time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// retryAndComplete retries a finished job, claims it and completes it with
// the result {"again":true}.
func retryAndComplete(t *testing.T, c *skiplock.Client, j *skiplock.JobRow) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.JobRetry(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := c.Claim(ctx, skiplock.ClaimParams{Queue: j.Queue, WorkerID: "again", Max: 100, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatalf("job %d, retried, was not claimed", j.ID)
		}
		for _, g := range got {
			if g.ID != j.ID {
				continue
			}
			if _, _, err := c.Complete(ctx, g.ID, skiplock.CompleteParams{WorkerID: "again", Attempt: g.Attempt,
				Result: json.RawMessage(`{"again":true}`)}); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}

// assertLastVersion checks that job id is gone from the database, that the
// vault answers it once, completed with the second run's result, and that
// it answers n jobs in all.
func assertLastVersion(t *testing.T, c *skiplock.Client, v *Vault, id int64, n int) {
	t.Helper()
	if j, err := c.JobGet(context.Background(), id); err == nil {
		t.Fatalf("job %d is still in the database (%s)", id, j.State)
	}
	all := queryAll(t, v)
	if len(all) != n {
		t.Fatalf("the vault answers %d jobs, want %d", len(all), n)
	}
	seen := 0
	for _, j := range all {
		if j.ID != id {
			continue
		}
		seen++
		if j.State != skiplock.StateCompleted || string(j.Result) != `{"again": true}` && string(j.Result) != `{"again":true}` {
			t.Fatalf("the vault answers job %d %s with result %s, want its last version: completed, {\"again\":true}", id, j.State, j.Result)
		}
	}
	if seen != 1 {
		t.Fatalf("the vault answers job %d %d times, want once", id, seen)
	}
}

func firstIn(t *testing.T, jobs []*skiplock.JobRow, s skiplock.JobState) *skiplock.JobRow {
	t.Helper()
	for _, j := range jobs {
		if j.State == s {
			return j
		}
	}
	t.Fatalf("no %s job", s)
	return nil
}

func finishedAt(id int64, s skiplock.JobState, at time.Time) *skiplock.JobRow {
	return &skiplock.JobRow{ID: id, Kind: "k", Queue: "q", State: s, Payload: json.RawMessage(`{}`),
		Metadata: json.RawMessage(`{}`), RunAt: at, CreatedAt: at, UpdatedAt: at, FinishedAt: &at}
}
