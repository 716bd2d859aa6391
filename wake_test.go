package skiplock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// slowNotify is a driver whose wake-ups take a while to go out, as over a
// slow network: longer than a producer takes to stop and close its pool.
type slowNotify struct {
	driver.Driver
	delay time.Duration
	sent  atomic.Int32 // wake-ups that went out
	ended atomic.Int32 // wake-ups that returned, sent or not
}

func (d *slowNotify) QueueNotify(ctx context.Context, queues []string) error {
	defer d.ended.Add(1)
	select {
	case <-time.After(d.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	err := d.Driver.QueueNotify(ctx, queues)
	if err == nil {
		d.sent.Add(1)
	}
	return err
}

// listenInserts listens, on a connection of its own, to the wake-ups of
// inserts into the schema at url.
func listenInserts(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn := pgtest.Conn(t, url)
	var schema string
	if err := conn.QueryRow(t.Context(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	ch := "skiplock_insert_" + schema[:min(len(schema), 40)]
	if _, err := conn.Exec(t.Context(), "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestProducerStopSendsItsWakeUps: a producer that inserts a job, stops and
// closes its database at once (as `skiplock enqueue` does) has woken the
// queue's workers in other processes; they do not wait for their poll.
func TestProducerStopSendsItsWakeUps(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	listener := listenInserts(t, url)
	ctx := t.Context()
	pg, err := pgdriver.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	drv := &slowNotify{Driver: pg, delay: 50 * time.Millisecond}
	producer, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	// InsertMany sends its wake-up after the insert (a single Insert sends
	// it with the job: TestInsertWakesAtItsCommit).
	if _, err := producer.InsertMany(ctx, []skiplock.InsertManyParams{{Args: sleepArgs{},
		Opts: &skiplock.InsertOpts{Queue: "mail"}}}); err != nil {
		t.Fatal(err)
	}
	if err := producer.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	pg.Close()
	if n := drv.sent.Load(); n != 1 {
		t.Errorf("wake-ups sent when Stop returned: %d, want 1", n)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	note, err := listener.WaitForNotification(waitCtx)
	if err != nil {
		t.Fatalf("no wake-up reached a listener: %v", err)
	}
	if note.Payload != "mail" {
		t.Fatalf("wake-up for queue %q, want mail", note.Payload)
	}
}

// TestInsertWakesAtItsCommit: one job inserted through a client that does
// not work its queue is committed with its queue's wake-up: a listener
// hears it, and no wake-up of its own followed the insert.
func TestInsertWakesAtItsCommit(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	listener := listenInserts(t, url)
	ctx := t.Context()
	pg, err := pgdriver.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	drv := &slowNotify{Driver: pg}
	producer, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := producer.Insert(ctx, sleepArgs{}, &skiplock.InsertOpts{Queue: "mail"}); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	note, err := listener.WaitForNotification(waitCtx)
	if err != nil || note.Payload != "mail" {
		t.Fatalf("wake-up heard: %v, %v; want queue mail", note, err)
	}
	if err := producer.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if n := drv.ended.Load(); n != 0 {
		t.Fatalf("wake-ups sent after the insert: %d, want none (it went with the job)", n)
	}
}

// TestStopWaitsForWakeUpsOnlyUntilItsContextEnds: a wake-up that cannot go
// out (the database does not answer) holds Stop until its context ends, and
// is then abandoned: Stop says so, and the send ends with it.
func TestStopWaitsForWakeUpsOnlyUntilItsContextEnds(t *testing.T) {
	t.Parallel()
	pg, _ := pgtest.Schema(t)
	drv := &slowNotify{Driver: pg, delay: time.Hour}
	producer, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := producer.InsertMany(t.Context(), []skiplock.InsertManyParams{{Args: sleepArgs{}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := producer.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stop with a wake-up stuck: %v, want the deadline", err)
	}
	testwait.Until(t, 10*time.Second, "the stuck wake-up to be cancelled", func() bool { return drv.ended.Load() == 1 })
	if err := producer.Stop(t.Context()); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}
