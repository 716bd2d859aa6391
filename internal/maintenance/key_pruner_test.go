package maintenance

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// TestKeyPrunerDeletesExpiredKeysInBatches: keys whose window passed by the
// pruner's clock go, batch by batch; a key inside its window stays.
func TestKeyPrunerDeletesExpiredKeysInBatches(t *testing.T) {
	t.Parallel()
	drv := sqlitetest.New(t)
	ctx := context.Background()
	for _, key := range []string{"a", "b", "c", "d", "e"} {
		window := time.Hour
		if key == "e" {
			window = 24 * time.Hour
		}
		p := &driver.InsertParams{Kind: "k", Queue: "q", Priority: 5, IdempotencyKey: key, UniquePolicy: "window",
			UniqueWindow: window, Paused: true}
		res, err := drv.JobInsertMany(ctx, []*driver.InsertParams{p})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drv.JobCancel(ctx, res[0].Job.ID); err != nil {
			t.Fatal(err)
		}
	}
	clock := time.Now()
	pruner := &KeyPruner{Store: drv, BatchSize: 2, Now: func() time.Time { return clock }}
	if n, err := pruner.RunOnce(ctx); err != nil || n != 0 {
		t.Fatalf("inside the windows: pruned %d, %v", n, err)
	}
	clock = clock.Add(2 * time.Hour)
	if n, err := pruner.RunOnce(ctx); err != nil || n != 4 {
		t.Fatalf("past the hour windows: pruned %d, %v; want 4", n, err)
	}
	pruner.MaxBatches = 1
	clock = clock.Add(48 * time.Hour)
	if n, err := pruner.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("past the day window: pruned %d, %v; want 1", n, err)
	}
}

// A run that hits its bound runs again a second later, not an Interval
// later: a backlog of expired keys larger than one run drains.
func TestKeyPrunerDrainsABacklogLargerThanARun(t *testing.T) {
	t.Parallel()
	drv := sqlitetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, key := range []string{"a", "b", "c"} {
		p := &driver.InsertParams{Kind: "k", Queue: "q", Priority: 5, IdempotencyKey: key, UniquePolicy: "window",
			UniqueWindow: time.Hour, Paused: true}
		res, err := drv.JobInsertMany(ctx, []*driver.InsertParams{p})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drv.JobCancel(ctx, res[0].Job.ID); err != nil {
			t.Fatal(err)
		}
	}
	later := time.Now().Add(2 * time.Hour)
	pruner := &KeyPruner{Store: drv, Interval: time.Hour, BatchSize: 1, MaxBatches: 1, Now: func() time.Time { return later }}
	go pruner.Run(ctx)
	testwait.Until(t, 30*time.Second, "every expired key pruned", func() bool {
		var n int
		err := drv.DB().QueryRowContext(ctx, "SELECT count(*) FROM skiplock_unique_keys").Scan(&n)
		return err == nil && n == 0
	})
}
