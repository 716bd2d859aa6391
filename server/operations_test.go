package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/server"
)

// bulkJobs inserts n pending jobs of kind k.
func bulkJobs(t *testing.T, b *bundle, k string, n int) []int64 {
	t.Helper()
	jobs := make([]skiplock.InsertManyParams, n)
	for i := range jobs {
		jobs[i] = skiplock.InsertManyParams{Args: skiplock.RawArgs{KindName: k}}
	}
	ids, err := b.client.InsertMany(t.Context(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// holdJob pauses job id (resumes it when resume) in a transaction left
// open until the answered function ends it: a bulk action on the job
// waits for it (a row lock on PostgreSQL, the one writer on SQLite).
func holdJob(t *testing.T, b *bundle, id int64, resume bool) func() {
	t.Helper()
	tx, err := b.drv.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	release := func() { _ = tx.Rollback(context.Background()) }
	admin, err := driver.As[driver.AdminStore](tx)
	if err == nil && resume {
		_, err = admin.JobResume(t.Context(), id)
	} else if err == nil {
		_, err = admin.JobPause(t.Context(), id)
	}
	if err != nil {
		release()
		t.Fatal(err)
	}
	return release
}

func operationOf(t *testing.T, a answer) map[string]any {
	t.Helper()
	op, _ := a.body["operation"].(map[string]any)
	if op == nil || op["id"] == "" {
		t.Fatalf("no operation in %s", a.raw)
	}
	return op
}

// wantStates checks that every job is in state st.
func wantStates(t *testing.T, b *bundle, ids []int64, st skiplock.JobState) {
	t.Helper()
	for _, id := range ids {
		j, err := b.client.JobGet(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != st {
			t.Fatalf("job %d: %s, want %s", id, j.State, st)
		}
	}
}

// TestBulkOperationPolled: "async": true answers 202 with an operation at
// once; GET /v1/operations/{id} follows it to completed with its total and
// done; another tenant's scoped token does not see it.
func TestBulkOperationPolled(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		scoped := createToken(t, b.drv, "admin", "other")
		ids := bulkJobs(t, b, "x", 30)
		op := operationOf(t, must(t, b.do(t, "POST", "/v1/jobs/bulk", admin,
			`{"action":"pause","filter":{"kind":["x"]},"async":true}`), 202))
		path := fmt.Sprintf("/v1/operations/%s", op["id"])
		deadline := time.Now().Add(time.Minute)
		for op["state"] == "running" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			op = operationOf(t, must(t, b.do(t, "GET", path, admin, nil), 200))
		}
		if op["state"] != "completed" || op["total"] != 30.0 || op["done"] != 30.0 || op["matched"] != 30.0 ||
			op["action"] != "pause" || op["finished_at"] == nil {
			t.Fatalf("operation %v", op)
		}
		wantStates(t, b, ids, skiplock.StatePaused)
		must(t, b.do(t, "GET", path, scoped, nil), 404)
		must(t, b.do(t, "GET", "/v1/operations/nope", admin, nil), 404)
		// Refused input starts no operation.
		must(t, b.do(t, "POST", "/v1/jobs/bulk", admin, `{"action":"resume","filter":{},"async":true}`), 400)
		wantStates(t, b, ids, skiplock.StatePaused)
	})
}

// TestBulkOperationCancelled: DELETE /v1/operations/{id} stops a running
// operation; the batch it was in is rolled back and no job changed.
func TestBulkOperationCancelled(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		ids := bulkJobs(t, b, "x", 20)
		release := holdJob(t, b, ids[5], false)
		defer release()
		op := operationOf(t, must(t, b.do(t, "POST", "/v1/jobs/bulk", admin,
			`{"action":"cancel","filter":{"kind":["x"]},"async":true}`), 202))
		path := fmt.Sprintf("/v1/operations/%s", op["id"])
		if op = operationOf(t, must(t, b.do(t, "GET", path, admin, nil), 200)); op["state"] != "running" {
			t.Fatalf("operation held by a lock: %v", op)
		}
		op = operationOf(t, must(t, b.do(t, "DELETE", path, admin, nil), 200))
		if op["state"] != "cancelled" || op["done"] != 0.0 || op["finished_at"] == nil {
			t.Fatalf("cancelled operation: %v", op)
		}
		release()
		wantStates(t, b, ids, skiplock.StatePending)
		if again := operationOf(t, must(t, b.do(t, "DELETE", path, admin, nil), 200)); again["state"] != "cancelled" {
			t.Fatalf("second cancel: %v", again)
		}
	})
}

// TestBulkSyncBound: a synchronous bulk action answers its counts when it
// ends within BulkSyncLimit, and 202 with the operation it goes on as when
// it does not; that operation finishes once nothing holds it.
func TestBulkSyncBound(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, func(c *server.Config) { c.BulkSyncLimit = 300 * time.Millisecond })
		admin := createToken(t, b.drv, "admin", "")
		ids := bulkJobs(t, b, "x", 10)
		a := must(t, b.do(t, "POST", "/v1/jobs/bulk", admin, `{"action":"pause","filter":{"kind":["x"]}}`), 200)
		if a.body["done"] != 10.0 || a.body["matched"] != 10.0 {
			t.Fatalf("sync answer %s", a.raw)
		}
		release := holdJob(t, b, ids[0], true)
		op := operationOf(t, must(t, b.do(t, "POST", "/v1/jobs/bulk", admin, `{"action":"cancel","filter":{"kind":["x"]}}`), 202))
		release()
		path := fmt.Sprintf("/v1/operations/%s", op["id"])
		deadline := time.Now().Add(time.Minute)
		for op["state"] == "running" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			op = operationOf(t, must(t, b.do(t, "GET", path, admin, nil), 200))
		}
		if op["state"] != "completed" || op["done"] != 10.0 {
			t.Fatalf("operation after the sync limit: %v", op)
		}
		wantStates(t, b, ids, skiplock.StateCancelled)
	})
}

// TestBulkSyncClientGone: a synchronous bulk action whose caller goes away
// stops at its batch in progress and never carries on once what held it
// is gone.
func TestBulkSyncClientGone(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		ids := bulkJobs(t, b, "x", 10)
		release := holdJob(t, b, ids[3], false)
		defer release()
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "POST", b.ts.URL+"/v1/jobs/bulk",
			strings.NewReader(`{"action":"cancel","filter":{"kind":["x"]}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			t.Fatalf("the request held by a lock answered %d", res.StatusCode)
		}
		// The handler is counted once it has returned, which it does only
		// after the action stopped; until the server hears the caller is
		// gone, the batch waits for the lock.
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(string(b.do(t, "GET", "/metrics", admin, nil).raw), `route="POST /v1/jobs/bulk"`) {
			if time.Now().After(deadline) {
				t.Fatal("the bulk request's handler did not return after its caller went away")
			}
			time.Sleep(10 * time.Millisecond)
		}
		release()
		// Had it carried on, the jobs would be cancelled within moments.
		time.Sleep(time.Second)
		wantStates(t, b, ids, skiplock.StatePending)
	})
}
