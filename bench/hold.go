package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock"
)

// holdRun is a transaction held open through an e2e run: it samples the hot
// table's size every second while held and, once released, how long the
// table takes to come back to its size before.
type holdRun struct {
	release func()
	stop    context.CancelFunc
	done    chan int64
}

// startHold opens the held transaction and starts sampling.
func startHold(ctx context.Context, db *Database, readsJobs bool) (*holdRun, error) {
	if db.Kind != "postgres" {
		return nil, fmt.Errorf("--hold-tx, --hold-snapshot: need PostgreSQL")
	}
	release, err := HoldSnapshot(ctx, db.URL, readsJobs)
	if err != nil {
		return nil, fmt.Errorf("hold a transaction: %w", err)
	}
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		release()
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	h := &holdRun{release: release, stop: stop, done: make(chan int64, 1)}
	go func() {
		defer conn.Close(context.Background())
		var peak int64
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if n, err := tableBytes(sctx, conn); err == nil {
				peak = max(peak, n)
			}
			select {
			case <-sctx.Done():
				h.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return h, nil
}

// end releases the transaction and answers the largest size sampled while
// it was held.
func (h *holdRun) end() int64 {
	h.stop()
	peak := <-h.done
	h.release()
	return peak
}

// settle discards the jobs the run left, lets a maintenance-only client (no
// queues, as `skiplock serve` runs one) look after the table for up to a
// minute, and answers the seconds it took to come back to at most twice
// `before` (or 1 MiB), -1 if it did not, and the size it came to.
func settle(ctx context.Context, o Options, db *Database, before int64) (float64, int64, error) {
	// The jobs the run inserted and did not work would keep the table at
	// their size: the bench discards them first, as workers would take them.
	if _, err := db.Admin.Exec(ctx, "DELETE FROM skiplock_jobs"); err != nil {
		return 0, 0, err
	}
	c, err := skiplock.NewClient(db.Driver, &skiplock.Config{Logger: o.Logger})
	if err != nil {
		return 0, 0, err
	}
	if err := c.Start(ctx); err != nil {
		return 0, 0, err
	}
	defer func() { _ = c.Stop(context.Background()) }()
	target := max(2*before, 1<<20)
	start := time.Now()
	for {
		n, err := db.TableBytes(ctx)
		if err != nil {
			return 0, 0, err
		}
		if n <= target {
			return time.Since(start).Seconds(), n, nil
		}
		if time.Since(start) > time.Minute {
			return -1, n, nil
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return 0, 0, err
		}
	}
}
