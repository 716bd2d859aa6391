package skiplock_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// Four clients work 5,000 jobs while the hot table is rebuilt again and
// again under them (its jobs copied to a new table, the old one dropped):
// every job completes once, on its first attempt, and none is left behind.
func TestHotTableRebuildUnderLoadLosesNoJob(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := context.Background()
	admin, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	const total = 5000
	params := make([]skiplock.InsertManyParams, total/2)
	for i := range params {
		params[i] = skiplock.InsertManyParams{Args: sleepArgs{N: i}}
	}
	if _, err := admin.InsertMany(ctx, params); err != nil {
		t.Fatal(err)
	}
	var rebuilt atomic.Int64
	stop := everyFewMs(t, func() error {
		r, err := drv.HotTableRebuild(ctx, driver.RebuildLimits{Force: true, LockWait: 20 * time.Millisecond})
		if r.Done {
			rebuilt.Add(1)
		}
		return err
	})
	cnt := &counter{runs: map[int64]int{}}
	startClients(t, 4, url, cnt.work)
	// The other half arrives while the clients work and the table turns over.
	for i := range params {
		params[i] = skiplock.InsertManyParams{Args: sleepArgs{N: total/2 + i}}
	}
	for i := 0; i < len(params); i += 100 {
		if _, err := admin.InsertMany(ctx, params[i:i+100]); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Until(t, 2*time.Minute, "every job to finish", func() bool {
		var live int
		if err := drv.Pool().QueryRow(ctx, `SELECT count(*) FROM skiplock_jobs`).Scan(&live); err != nil {
			t.Fatal(err)
		}
		return live == 0
	})
	if err := stop(); err != nil {
		t.Fatalf("rebuild under load: %v", err)
	}
	if rebuilt.Load() < 2 {
		t.Fatalf("the hot table was rebuilt %d times under load; the test needs two or more", rebuilt.Load())
	}
	cnt.eachRanOnce(t, drv, total, fmt.Sprintf("(rebuilt %d times)", rebuilt.Load()))
	t.Logf("rebuilt %d times under load", rebuilt.Load())
}

// Four clients work 5,000 jobs while a transaction holds the hot table:
// new jobs go to spill tables, which are left for new ones, emptied (their
// live jobs, running ones too, moved to the next) and, once the holder has
// ended, taken back into the hot table and dropped (by this test's loop or
// the clients' leader), again and again under the clients. Every job completes once, on its first attempt, and none is
// left behind.
func TestHotTableSpillUnderLoadLosesNoJob(t *testing.T) {
	t.Parallel()
	drv, url := pgtest.Schema(t)
	ctx := context.Background()
	admin, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	holder := pgtest.HoldTable(t, url)
	testwait.Until(t, 30*time.Second, "the holder to be named", func() bool {
		r, err := drv.HotTableRebuild(ctx, driver.RebuildLimits{Force: true, LockWait: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return r.HeldBy != ""
	})
	limits := driver.SpillLimits{Bytes: 256 << 10, LockWait: 20 * time.Millisecond}
	var opened, emptied, dropped atomic.Int64
	stop := everyFewMs(t, func() error {
		s, err := drv.HotTableSpill(ctx, true, limits)
		if s.Opened != "" {
			opened.Add(1)
		}
		if s.Emptied != "" {
			emptied.Add(1)
		}
		if s.Dropped != "" {
			dropped.Add(1)
		}
		return err
	})
	cnt := &counter{runs: map[int64]int{}}
	startClients(t, 4, url, cnt.work)
	const total = 5000
	params := make([]skiplock.InsertManyParams, 100)
	insert := func(n int) {
		for i := range params {
			params[i] = skiplock.InsertManyParams{Args: sleepArgs{N: n + i}}
		}
		if _, err := admin.InsertMany(ctx, params); err != nil {
			t.Fatal(err)
		}
	}
	// Half the jobs under the holder; once a spill table has been emptied
	// under it, however slow the machine, the holder ends, and the other
	// half are inserted while the spill tables go back.
	n := 0
	for ; n < total/2; n += len(params) {
		insert(n)
	}
	testwait.Until(t, 2*time.Minute, "a spill table to be emptied under the holder", func() bool { return emptied.Load() > 0 })
	if _, err := holder.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	for ; n < total; n += len(params) {
		insert(n)
	}
	testwait.Until(t, 2*time.Minute, "every job to finish and the spill tables to go", func() bool {
		var live, spills int
		if err := drv.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM skiplock_jobs), (SELECT count(*) FROM skiplock_hot_spill)`).Scan(&live, &spills); err != nil {
			t.Fatal(err)
		}
		return live == 0 && spills == 0
	})
	if err := stop(); err != nil {
		t.Fatalf("spill under load: %v", err)
	}
	// The spill tables are gone (the wait above): taken back by this loop
	// or by the clients' leader, whose upkeep runs the same step, so the
	// loop's own count of drops may be zero.
	if opened.Load() == 0 {
		t.Fatal("no spill table was opened under the holder")
	}
	cnt.eachRanOnce(t, drv, total, fmt.Sprintf("(spill tables opened %d, emptied %d, dropped %d)", opened.Load(), emptied.Load(), dropped.Load()))
	t.Logf("spill tables opened %d, emptied %d, dropped %d under load", opened.Load(), emptied.Load(), dropped.Load())
}
