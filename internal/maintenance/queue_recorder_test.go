package maintenance

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestQueueRecorderRecordsRecentlyFinishedQueues: the queue of a job
// finished within driver.QueueRecentWindow of the recorder's clock gets a
// settings row; one finished before the window does not.
func TestQueueRecorderRecordsRecentlyFinishedQueues(t *testing.T) {
	t.Parallel()
	drv := sqlitetest.New(t)
	ctx := context.Background()
	res, err := drv.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "email", Queue: "mail", Priority: 5, Paused: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drv.JobCancel(ctx, res[0].Job.ID); err != nil {
		t.Fatal(err)
	}
	recorded := func() int {
		var n int
		if err := drv.DB().QueryRowContext(ctx, `SELECT count(*) FROM skiplock_queues WHERE name = 'mail'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	clock := time.Now().Add(time.Hour)
	rec := &QueueRecorder{Store: drv, Now: func() time.Time { return clock }}
	if err := rec.RunOnce(ctx); err != nil || recorded() != 0 {
		t.Fatalf("an hour later: %v, %d rows for mail; want none", err, recorded())
	}
	clock = time.Now().Add(time.Minute)
	if err := rec.RunOnce(ctx); err != nil || recorded() != 1 {
		t.Fatalf("a minute later: %v, %d rows for mail; want one", err, recorded())
	}
}
