package server_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// setNextJobID makes the next job drv inserts get id.
func setNextJobID(t *testing.T, drv driver.Driver, id int64) {
	t.Helper()
	switch d := drv.(type) {
	case *pgdriver.Driver:
		pgtest.SetNextJobID(t, d, id)
	case *sqlitedriver.Driver:
		sqlitetest.SetNextJobID(t, d, id)
	default:
		t.Fatalf("no way to set the next job id of %T", drv)
	}
}

// TestIDsPast2To31 pages through GET /v1/jobs by next_cursor, and takes a
// job through its life, with ids that cross 2³¹: ids are 64-bit end to end.
func TestIDsPast2To31(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		drv := db.open(t)
		setNextJobID(t, drv, 1<<31-10)
		b := setupOn(t, drv, nil)
		var ids []int64
		for i := range 30 {
			spec := map[string]any{"kind": "a"}
			if i%2 == 0 {
				spec["workflow_id"] = "wf-big"
			}
			ids = append(ids, id(must(t, b.do(t, "POST", "/v1/jobs", "", spec), 201).job()))
		}
		if ids[0] >= 1<<31 || ids[29] < 1<<31 {
			t.Fatalf("ids %d to %d do not cross 2³¹", ids[0], ids[29])
		}
		want := slices.Clone(ids)
		slices.Reverse(want)
		if got := pagedIDs(t, b, "/v1/jobs?limit=4"); !slices.Equal(got, want) {
			t.Fatalf("paged %v, want every job once, newest first: %v", got, want)
		}
		if n := len(must(t, b.do(t, "GET", "/v1/workflows/wf-big", "", nil), 200).jobs()); n != 15 {
			t.Fatalf("workflow wf-big has %d jobs, want 15", n)
		}
		bigJobLifecycle(t, b, ids[29])
	})
}

// pagedIDs follows next_cursor from path to the last page.
func pagedIDs(t *testing.T, b *bundle, path string) []int64 {
	t.Helper()
	var seen []int64
	cursor := ""
	for range 100 {
		a := must(t, b.do(t, "GET", path+"&cursor="+cursor, "", nil), 200)
		for _, j := range a.jobs() {
			seen = append(seen, id(j))
		}
		if cursor, _ = a.body["next_cursor"].(string); cursor == "" {
			return seen
		}
	}
	t.Fatalf("next_cursor did not end after 100 pages")
	return nil
}

// bigJobLifecycle claims and completes job parent (an id past 2³¹) on which
// a new job depends, then cancels and retries that dependent.
func bigJobLifecycle(t *testing.T, b *bundle, parent int64) {
	t.Helper()
	child := must(t, b.do(t, "POST", "/v1/jobs", "", map[string]any{"kind": "child", "depends_on": []int64{parent}}), 201).job()
	if deps, _ := child["depends_on"].([]any); len(deps) != 1 || int64(deps[0].(float64)) != parent || child["state"] != "waiting" {
		t.Fatalf("dependent job: %v", child)
	}
	must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", parent), "", nil), 200)
	// Claim order is oldest first: claim down to the parent, the newest "a".
	claimed := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w","max":30,"kinds":["a"]}`), 200).jobs()
	if len(claimed) != 30 || id(claimed[29]) != parent {
		t.Fatalf("claimed %d jobs, want 30 ending with job %d", len(claimed), parent)
	}
	must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/heartbeat", parent), "", `{"worker_id":"w","progress":50}`), 200)
	must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", parent), "", `{"worker_id":"w"}`), 200)
	path := fmt.Sprintf("/v1/jobs/%d", id(child))
	if st := must(t, b.do(t, "GET", path, "", nil), 200).job()["state"]; st != "pending" {
		t.Fatalf("dependent of a completed job %d: %v, want pending", parent, st)
	}
	must(t, b.do(t, "POST", path+"/cancel", "", nil), 200)
	if st := must(t, b.do(t, "POST", path+"/retry", "", nil), 200).job()["state"]; st != "pending" {
		t.Fatalf("retried job: %v, want pending", st)
	}
}
