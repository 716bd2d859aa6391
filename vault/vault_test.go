package vault

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// atMicros answers a copy of j with its times cut to microseconds, the
// precision of the vault's timestamps.
func atMicros(j *skiplock.JobRow) *skiplock.JobRow {
	c := *j
	c.RunAt, c.CreatedAt, c.UpdatedAt = micro(c.RunAt), micro(c.CreatedAt), micro(c.UpdatedAt)
	c.StartedAt, c.FinishedAt = microPtr(c.StartedAt), microPtr(c.FinishedAt)
	c.LeaseUntil, c.HeartbeatAt = microPtr(c.LeaseUntil), microPtr(c.HeartbeatAt)
	c.Errors = slices.Clone(c.Errors)
	for i := range c.Errors {
		c.Errors[i].At = c.Errors[i].At.UTC()
	}
	return &c
}

// TestStoreQueryRoundTrip: what Store writes, Query reads back field for
// field; a second Store of the same jobs writes nothing.
func TestStoreQueryRoundTrip(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db database) {
		ctx := context.Background()
		jobs := finishJobs(t, db.client, 60)
		v, dir := openDir(t)
		res, err := v.Put(ctx, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stored != len(jobs) || res.Held != 0 {
			t.Fatalf("stored %d held %d, want %d and 0", res.Stored, res.Held, len(jobs))
		}
		got := queryAll(t, v)
		if len(got) != len(jobs) {
			t.Fatalf("query answered %d jobs, want %d", len(got), len(jobs))
		}
		byID := map[int64]*skiplock.JobRow{}
		for _, j := range got {
			byID[j.ID] = j
		}
		for _, want := range jobs {
			j := byID[want.ID]
			if j == nil {
				t.Fatalf("job %d missing from the vault", want.ID)
			}
			if g, w := viewJSON(t, j), viewJSON(t, atMicros(want)); g != w {
				t.Fatalf("job %d read back\n got %s\nwant %s", want.ID, g, w)
			}
		}
		again, err := v.Put(ctx, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if again.Stored != 0 || again.Held != len(jobs) || len(again.Parts) != 0 {
			t.Fatalf("second store: stored %d held %d parts %d, want 0, %d, 0", again.Stored, again.Held, len(again.Parts), len(jobs))
		}
		files, _ := filepath.Glob(filepath.Join(dir, "jobs", "date=*", "hour=*", "part-*.parquet"))
		parts, err := v.Parts(ctx, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != len(parts) || len(parts) == 0 {
			t.Fatalf("%d jobs files on disk, %d parts in the manifest", len(files), len(parts))
		}
	})
}

// TestStoreRefusesUnfinished: a live job is an error and nothing is written.
func TestStoreRefusesUnfinished(t *testing.T) {
	v, dir := openDir(t)
	now := time.Now()
	_, err := v.Store(context.Background(), []*skiplock.JobRow{{ID: 1, State: skiplock.StateCompleted, FinishedAt: &now},
		{ID: 2, State: skiplock.StatePending}})
	if err == nil {
		t.Fatal("stored a pending job")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused store left %d entries in the vault", len(entries))
	}
}

// TestQueryFilters: finish-time bounds, state, queue, kind, tenant and
// limit each narrow a query.
func TestQueryFilters(t *testing.T) {
	v, _ := openDir(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var jobs []*skiplock.JobRow
	for i := range 6 {
		f := base.Add(time.Duration(i) * 30 * time.Minute)
		st := []skiplock.JobState{skiplock.StateCompleted, skiplock.StateFailed, skiplock.StateCancelled}[i%3]
		jobs = append(jobs, &skiplock.JobRow{ID: int64(i + 1), Kind: []string{"a", "b"}[i%2], Queue: "q" + string(rune('0'+i%2)),
			Tenant: []string{"", "acme"}[i%2], State: st, RunAt: base, CreatedAt: base, UpdatedAt: f, FinishedAt: &f})
	}
	if _, err := v.Store(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	parts, _ := v.Parts(ctx, time.Time{}, time.Time{})
	if len(parts) != 3 {
		t.Fatalf("%d parts, want one per hour (3)", len(parts))
	}
	acme := "acme"
	for _, c := range []struct {
		name string
		q    QueryParams
		want []int64
	}{
		{"from", QueryParams{From: base.Add(time.Hour)}, []int64{3, 4, 5, 6}},
		{"to", QueryParams{To: base.Add(time.Hour)}, []int64{1, 2}},
		{"from-to", QueryParams{From: base.Add(30 * time.Minute), To: base.Add(90 * time.Minute)}, []int64{2, 3}},
		{"state", QueryParams{States: []skiplock.JobState{skiplock.StateFailed}}, []int64{2, 5}},
		{"kind", QueryParams{Kind: "b"}, []int64{2, 4, 6}},
		{"queue", QueryParams{Queue: "q0"}, []int64{1, 3, 5}},
		{"tenant", QueryParams{Tenant: &acme}, []int64{2, 4, 6}},
		{"limit", QueryParams{Limit: 2}, []int64{1, 2}},
	} {
		var got []int64
		if err := v.Query(ctx, c.q, func(j *skiplock.JobRow) error { got = append(got, j.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// TestOpenRefusesBadLocations: each names what is wrong.
func TestOpenRefusesBadLocations(t *testing.T) {
	for _, loc := range []string{"", "ftp://x/y", "file://host/x", "s3:///prefix", "s3://b/p?colour=red", "s3://b/p?insecure=maybe"} {
		if _, err := Open(context.Background(), loc); err == nil {
			t.Errorf("Open(%q) accepted", loc)
		}
	}
}

// TestOpenFileURL: file:///PATH is the directory PATH.
func TestOpenFileURL(t *testing.T) {
	dir := t.TempDir()
	v, err := Open(context.Background(), "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != dir {
		t.Fatalf("file URL opened %s, want %s", v, dir)
	}
}
