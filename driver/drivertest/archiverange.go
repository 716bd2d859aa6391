package drivertest

import (
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e *env) retention() driver.RetentionStore { return need[driver.RetentionStore](e, e.d) }

// ArchiveRangePages: ArchiveRange answers every archived job of its range
// once, page after page from the last job of the page before, and none
// outside the range or still live.
var _ = add("ArchiveRangePages", func(e *env) {
	var done []int64
	for range 7 {
		j := e.insert(job("range"))
		e.complete(e.claimID(j, "w", lease), `{}`)
		done = append(done, j.ID)
	}
	live := e.insert(job("range"))
	read := func(p driver.RangeParams) []int64 {
		e.t.Helper()
		var ids []int64
		for {
			page, err := e.retention().ArchiveRange(e.ctx, p)
			if err != nil {
				e.t.Fatal(err)
			}
			for _, j := range page {
				if j.FinishedAt == nil {
					e.t.Fatalf("job %d answered unfinished (%s)", j.ID, j.State)
				}
				ids = append(ids, j.ID)
			}
			if len(page) < p.Limit {
				return ids
			}
			last := page[len(page)-1]
			p.After = &driver.ArchivedRef{ID: last.ID, FinishedAt: *last.FinishedAt}
		}
	}
	all := read(driver.RangeParams{Limit: 3})
	seen := map[int64]int{}
	for _, id := range all {
		seen[id]++
	}
	for _, id := range done {
		if seen[id] != 1 {
			e.t.Fatalf("job %d answered %d times over the pages %v, want once", id, seen[id], all)
		}
	}
	if seen[live.ID] != 0 || len(all) != len(done) {
		e.t.Fatalf("pages answered %v, want the %d finished jobs %v", all, len(done), done)
	}
	past := time.Now().Add(-time.Hour)
	if got := read(driver.RangeParams{To: past, Limit: 3}); len(got) != 0 {
		e.t.Fatalf("a range that ends an hour ago answered %v", got)
	}
	if got := read(driver.RangeParams{From: past, Limit: 100}); len(got) != len(done) {
		e.t.Fatalf("a range from an hour ago answered %v, want the %d finished jobs", got, len(done))
	}
})
