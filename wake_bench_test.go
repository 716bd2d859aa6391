package skiplock_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// BenchmarkInsertTxConcurrent: 32 transactions at once, each inserting one
// job with InsertTx and committing. Every wake-up sent in a transaction
// takes NOTIFY's lock through that transaction's commit, so how often they
// are sent decides how many of these commits run one at a time.
//
//	go test -run '^$' -bench InsertTxConcurrent -benchtime 10s .
func BenchmarkInsertTxConcurrent(b *testing.B) {
	_, url := pgtest.Schema(b)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	// Beyond the 32 transactions' connections, room for what InsertTx
	// reads outside them (the contracts, once).
	cfg.MaxConns = 40
	pool, err := pgxpool.NewWithConfig(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	c, err := skiplock.NewClient(pgdriver.New(pool), &skiplock.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 32 {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				tx, err := pool.Begin(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := c.InsertTx(ctx, tx, EmailArgs{To: "a@example.com"}, nil); err != nil {
					_ = tx.Rollback(ctx)
					b.Error(err)
					return
				}
				if err := tx.Commit(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tx/s")
}
