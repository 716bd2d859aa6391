package vault

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// restoreFixture is a vault written by an earlier run (TestWriteRestoreFixture):
// twelve jobs of finishJobs (completed, failed, cancelled; two queues; keys,
// tenants and workflows on some), one of the failed ones stored twice (retried
// after it was stored, failed again).
const restoreFixture = "testdata/restore"

// TestWriteRestoreFixture writes restoreFixture again; it runs only with
// SKIPLOCK_WRITE_VAULT_FIXTURE=1, so that the files the other tests read
// stay those of an earlier run.
func TestWriteRestoreFixture(t *testing.T) {
	if os.Getenv("SKIPLOCK_WRITE_VAULT_FIXTURE") != "1" {
		t.Skip("set SKIPLOCK_WRITE_VAULT_FIXTURE=1 to write " + restoreFixture)
	}
	ctx := context.Background()
	c := newClient(t, sqlitetest.Open(t, filepath.Join(t.TempDir(), "skiplock.db")))
	jobs := finishJobs(t, c, 12)
	if err := os.RemoveAll(restoreFixture); err != nil {
		t.Fatal(err)
	}
	v, err := Open(ctx, restoreFixture)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Put(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	var again *skiplock.JobRow
	for _, j := range jobs {
		if j.State == skiplock.StateFailed {
			again = j
			break
		}
	}
	if _, err := c.JobRetry(ctx, again.ID); err != nil {
		t.Fatal(err)
	}
	claimAndFinish(t, c, again.Queue, []int64{0, again.ID}) // position 1: fails
	j, err := c.JobGet(ctx, again.ID)
	if err != nil || j.State != skiplock.StateFailed {
		t.Fatalf("retried job %d: %v, %v; want failed", again.ID, j, err)
	}
	if _, err := v.Put(ctx, []*skiplock.JobRow{j}); err != nil {
		t.Fatal(err)
	}
}

// fixtureJobs answers the jobs of restoreFixture, the latest version of
// each, by id.
func fixtureJobs(t *testing.T, v *Vault) map[int64]*skiplock.JobRow {
	t.Helper()
	out := map[int64]*skiplock.JobRow{}
	for _, j := range queryAll(t, v) {
		out[j.ID] = j
	}
	if len(out) != 12 {
		t.Fatalf("the fixture holds %d jobs, want 12", len(out))
	}
	return out
}

func openFixture(t *testing.T) *Vault {
	t.Helper()
	v, err := Open(context.Background(), restoreFixture)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func restore(t *testing.T, c *skiplock.Client, v *Vault, p RestoreParams) RestoreResult {
	t.Helper()
	res, err := Restore(context.Background(), c, v, p)
	if err != nil {
		t.Fatalf("restore into the %s: %v", p.Into, err)
	}
	return res
}

func TestRestoreIntoArchive(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db database) {
		ctx := context.Background()
		v := openFixture(t)
		want := fixtureJobs(t, v)
		res := restore(t, db.client, v, RestoreParams{Into: RestoreArchive, Batch: 5})
		if res != (RestoreResult{Matched: 12, Restored: 12}) {
			t.Fatalf("restore: %+v, want 12 matched and restored", res)
		}
		for id, w := range want {
			got, err := db.client.JobGet(ctx, id)
			if err != nil {
				t.Fatalf("job %d: %v", id, err)
			}
			if g, w := sameJSON(t, viewJSON(t, got)), sameJSON(t, viewJSON(t, w)); g != w {
				t.Fatalf("job %d restored as\n%s\nwant as the vault holds it\n%s", id, g, w)
			}
		}
		if res := restore(t, db.client, v, RestoreParams{Into: RestoreArchive}); res != (RestoreResult{Matched: 12, Skipped: 12}) {
			t.Fatalf("second restore: %+v, want all 12 skipped", res)
		}
		if res := restore(t, db.client, v, RestoreParams{Into: RestoreQueue}); res.Restored != 0 || res.Skipped != res.Matched {
			t.Fatalf("restore into the queue of archived jobs: %+v, want all skipped", res)
		}
		n, err := db.client.InsertMany(ctx, []skiplock.InsertManyParams{{Args: skiplock.RawArgs{KindName: "new"}}})
		if err != nil || n[0] <= slices.Max(mapKeys(want)) {
			t.Fatalf("a job inserted after the restore: id %v, err %v; want above the restored ids", n, err)
		}
	})
}

// TestRestoreKeepsRetryBudget stores a job retried by hand and failed again,
// deletes it from the database and restores it into the archive: the
// attempt its retry budget started from comes back with it.
func TestRestoreKeepsRetryBudget(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db database) {
		ctx := context.Background()
		var failed *skiplock.JobRow
		for _, j := range finishJobs(t, db.client, 6) {
			if j.State == skiplock.StateFailed {
				failed = j
			}
		}
		if _, err := db.client.JobRetry(ctx, failed.ID); err != nil {
			t.Fatal(err)
		}
		claimAndFinish(t, db.client, failed.Queue, []int64{0, failed.ID}) // position 1: fails
		again, err := db.client.JobGet(ctx, failed.ID)
		if err != nil || again.State != skiplock.StateFailed || again.AttemptBase == 0 {
			t.Fatalf("job %d after a retry by hand and a failure: %+v, %v; want failed with an attempt base", failed.ID, again, err)
		}
		v, _ := openDir(t)
		if _, err := v.Store(ctx, []*skiplock.JobRow{again}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.client.JobsBulk(ctx, skiplock.BulkParams{Action: skiplock.BulkDelete,
			Filter: skiplock.BulkFilter{States: []skiplock.JobState{skiplock.StateFailed}}}); err != nil {
			t.Fatal(err)
		}
		if res := restore(t, db.client, v, RestoreParams{Into: RestoreArchive}); res.Restored != 1 {
			t.Fatalf("restore: %+v, want the job restored", res)
		}
		got, err := db.client.JobGet(ctx, failed.ID)
		if err != nil || got.AttemptBase != again.AttemptBase || got.Attempt != again.Attempt ||
			got.RunOnParentFailure != again.RunOnParentFailure {
			t.Fatalf("restored %+v, %v; want attempt %d from base %d", got, err, again.Attempt, again.AttemptBase)
		}
	})
}

func TestRestoreIntoQueue(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db database) {
		ctx := context.Background()
		v := openFixture(t)
		all := fixtureJobs(t, v)
		var failed []int64
		for id, j := range all {
			if j.State == skiplock.StateFailed && j.Queue == "mail" {
				failed = append(failed, id)
			}
		}
		slices.Sort(failed)
		// One of them is in the database already: skipped, left as it is.
		present := all[failed[0]]
		if err := restoreOne(db, present, RestoreArchive); err != nil {
			t.Fatal(err)
		}
		dry := restore(t, db.client, v, RestoreParams{Into: RestoreQueue, States: []skiplock.JobState{skiplock.StateFailed},
			Queue: "mail", DryRun: true})
		res := restore(t, db.client, v, RestoreParams{Into: RestoreQueue, States: []skiplock.JobState{skiplock.StateFailed},
			Queue: "mail"})
		want := RestoreResult{Matched: len(failed), Restored: len(failed) - 1, Skipped: 1}
		if res != want || dry != want {
			t.Fatalf("restore: %+v (dry run %+v), want %+v", res, dry, want)
		}
		if j, err := db.client.JobGet(ctx, present.ID); err != nil || j.State != skiplock.StateFailed {
			t.Fatalf("job %d present before the restore: %v, %v; want left failed", present.ID, j, err)
		}
		for _, id := range failed[1:] {
			j, err := db.client.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			was := all[id]
			if j.State != skiplock.StatePending || j.Attempt != was.Attempt || len(j.Errors) != len(was.Errors) ||
				j.MaxRetries != was.MaxRetries+was.Attempt {
				t.Fatalf("job %d restored %s attempt %d/%d with %d errors; want pending, attempt %d, max_retries %d, %d errors",
					id, j.State, j.Attempt, j.MaxRetries, len(j.Errors), was.Attempt, was.MaxRetries+was.Attempt, len(was.Errors))
			}
		}
		claimed, err := db.client.Claim(ctx, skiplock.ClaimParams{Queue: "mail", WorkerID: "w", Max: 100, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if got := jobIDs(claimed); !slices.Equal(got, failed[1:]) {
			t.Fatalf("claimed %v, want the restored %v", got, failed[1:])
		}
		if res := restore(t, db.client, v, RestoreParams{Into: RestoreQueue, States: []skiplock.JobState{skiplock.StateFailed},
			Queue: "mail"}); res != (RestoreResult{Matched: len(failed), Skipped: len(failed)}) {
			t.Fatalf("second restore: %+v, want nothing restored", res)
		}
	})
}

func TestRestoreRefusesBadParams(t *testing.T) {
	v := openFixture(t)
	c := newClient(t, sqlitetest.Open(t, filepath.Join(t.TempDir(), "skiplock.db")))
	now := time.Now()
	for name, p := range map[string]RestoreParams{
		"into":            {},
		"completed-queue": {Into: RestoreQueue, States: []skiplock.JobState{skiplock.StateCompleted}},
		"live-state":      {Into: RestoreArchive, States: []skiplock.JobState{skiplock.StatePending}},
		"range":           {Into: RestoreArchive, From: now, To: now.Add(-time.Hour)},
		"batch":           {Into: RestoreArchive, Batch: -1},
	} {
		_, err := Restore(context.Background(), c, v, p)
		var ve *skiplock.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: err %v, want a ValidationError", name, err)
		}
	}
	jobs, err := c.JobList(context.Background(), skiplock.JobListParams{Limit: 10})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("refused restores left %d jobs (err %v)", len(jobs), err)
	}
}

// restoreOne restores one job through the driver, as an earlier restore
// would have.
func restoreOne(db database, j *skiplock.JobRow, into RestoreTarget) error {
	_, err := restoreBatch(context.Background(), db.client.Driver(), []*skiplock.JobRow{j}, into, false)
	return err
}

// sameJSON answers doc with its objects' keys in one order (PostgreSQL's
// jsonb keeps its own).
func sameJSON(t *testing.T, doc string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jobIDs(jobs []*skiplock.JobRow) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	slices.Sort(out)
	return out
}

func mapKeys(m map[int64]*skiplock.JobRow) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
