package maintenance

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

func TestVacuumerVacuumsOnlyPastTheThreshold(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	ctx := context.Background()
	jobs := make([]*driver.InsertParams, 500)
	for i := range jobs {
		jobs[i] = &driver.InsertParams{Kind: "k", Queue: "default", Priority: 5, MaxRetries: 3}
	}
	if _, err := drv.JobInsertFast(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.Pool().Exec(ctx, `DELETE FROM skiplock_jobs`); err != nil {
		t.Fatal(err)
	}
	// A threshold above what there is: nothing to do.
	if did, err := drv.HotTableVacuum(ctx, 1<<40); err != nil || did {
		t.Fatalf("vacuumed below the threshold: %v %v", did, err)
	}
	if err := (&Vacuumer{Store: drv, DeadRows: 1}).RunOnce(ctx); err != nil {
		t.Fatalf("vacuum: %v", err)
	}
	// The dead rows reach the statistics within a second or so; then the
	// table is vacuumed.
	deadline := time.Now().Add(15 * time.Second)
	for {
		did, err := drv.HotTableVacuum(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if did {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("500 dead rows never made the hot table vacuum")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
