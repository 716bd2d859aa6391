package bench

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
	"github.com/skiplock/skiplock/server"
)

// TestHTTPWorker: the HTTP worker claims and batch-completes every job of
// the queue through a server, over HTTP/1.1 and h2c, its reports carried
// by its next claims or sent on their own.
func TestHTTPWorker(t *testing.T) {
	for _, db := range []struct {
		name string
		open func(t *testing.T) driver.Driver
	}{
		{"postgres", func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d }},
		{"sqlite", func(t *testing.T) driver.Driver { return sqlitetest.New(t) }},
	} {
		for _, mode := range []struct {
			h2c, separate bool
		}{{false, false}, {true, false}, {false, true}, {true, true}} {
			name := db.name + map[bool]string{false: "/http1", true: "/h2c"}[mode.h2c] +
				map[bool]string{false: "/reports-with-claims", true: "/separate-reports"}[mode.separate]
			t.Run(name, func(t *testing.T) {
				drv := db.open(t)
				client, err := skiplock.NewClient(drv, &skiplock.Config{Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				srv, err := server.New(server.Config{Client: client, OpenWithoutTokens: true,
					Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				ts := httptest.NewUnstartedServer(srv.Handler())
				ts.Config.Protocols = new(http.Protocols)
				ts.Config.Protocols.SetHTTP1(true)
				ts.Config.Protocols.SetUnencryptedHTTP2(true)
				ts.Start()
				t.Cleanup(func() { _ = srv.Close(); ts.Close() })
				const n = 250
				jobs := make([]skiplock.InsertManyParams, n)
				for i := range jobs {
					jobs[i] = skiplock.InsertManyParams{Args: noop{}, Opts: &skiplock.InsertOpts{Queue: Queue}}
				}
				if _, err := client.InsertMany(t.Context(), jobs); err != nil {
					t.Fatal(err)
				}
				w := &HTTPWorker{Server: ts.URL, Queue: Queue, WorkerID: "w", Max: 40, Loops: 3, H2C: mode.h2c,
					SeparateReports: mode.separate}
				ctx, cancel := context.WithCancel(t.Context())
				var worked atomic.Int64
				done := make(chan error, 1)
				go func() { done <- w.Run(ctx, &worked) }()
				testwait.Until(t, time.Minute, "every job worked", func() bool { return worked.Load() >= n })
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				qs, err := drv.(driver.FullDriver).QueueList(t.Context(), false)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range qs {
					for st, c := range q.Counts {
						if q.Name == Queue && c > 0 {
							t.Errorf("%d jobs left %s", c, st)
						}
					}
				}
				if got := worked.Load(); got != n {
					t.Errorf("worked %d, want %d", got, n)
				}
			})
		}
	}
}
