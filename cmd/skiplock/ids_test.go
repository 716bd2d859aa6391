package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestCLIIDsPast2To31: jobs enqueued past id 2³¹ depend on each other and
// list page by page with --cursor.
func TestCLIIDsPast2To31(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	pgtest.SetNextJobID(t, d, 1<<31-1)
	enqueue := func(args ...string) int64 {
		t.Helper()
		r := runCLI(t, url, append([]string{"enqueue", "a", "--json"}, args...)...)
		var got struct {
			Job struct {
				ID int64 `json:"id"`
			} `json:"job"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil {
			t.Fatalf("enqueue: %+v", r)
		}
		return got.Job.ID
	}
	first := enqueue()
	second := enqueue("--depends-on", strconv.FormatInt(first, 10))
	third := enqueue()
	if first != 1<<31-1 || third != 1<<31+1 {
		t.Fatalf("ids %d, %d, %d; want 2³¹-1 to 2³¹+1", first, second, third)
	}
	r := runCLI(t, url, "jobs", "list", "--json", "--cursor", strconv.FormatInt(third, 10))
	var page struct {
		Jobs []struct {
			ID        int64   `json:"id"`
			DependsOn []int64 `json:"depends_on"`
		} `json:"jobs"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &page) != nil {
		t.Fatalf("jobs list --cursor %d: %+v", third, r)
	}
	listed := page.Jobs
	if len(listed) != 2 || listed[0].ID != second || listed[1].ID != first ||
		!slices.Equal(listed[0].DependsOn, []int64{first}) {
		t.Fatalf("jobs before %d: %+v, want %d (depending on %d) and %d", third, listed, second, first, first)
	}
}
