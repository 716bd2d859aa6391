package server_test

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/testwait"
	"github.com/skiplock/skiplock/server"
)

// TestCloseLeavesNoGoroutine: a server that held a long poll and an event
// stream leaves no goroutine once it and its listener are closed: its
// event hub, its hold on the client's wake-up listener and its requests
// all end. Not parallel: goleak sees every goroutine of the process (the
// database's own exist before IgnoreCurrent and stay).
func TestCloseLeavesNoGoroutine(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			drv := db.open(t)
			ignore := goleak.IgnoreCurrent()
			client, err := skiplock.NewClient(drv, &skiplock.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := server.New(server.Config{Client: client, Logger: slog.New(slog.DiscardHandler),
				OpenWithoutTokens: true, AuthCacheTTL: -1, EventPollInterval: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			hc := &http.Client{Transport: &http.Transport{}}

			ctx, cancel := context.WithCancel(t.Context())
			req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/events", nil)
			stream, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if line, _ := bufio.NewReader(stream.Body).ReadString('\n'); line != ": connected\n" {
				t.Fatalf("event stream starts with %q", line)
			}
			poll, err := hc.Post(ts.URL+"/v1/queues/q/claim", "application/json",
				strings.NewReader(`{"worker_id":"w","wait_seconds":1}`))
			if err != nil {
				t.Fatal(err)
			}
			if poll.StatusCode != http.StatusOK {
				t.Fatalf("long poll: %s", poll.Status)
			}
			_ = poll.Body.Close()

			_ = srv.Close()
			cancel()
			_ = stream.Body.Close()
			ts.Close()
			hc.CloseIdleConnections()
			// goleak's own retries last about a second; on a slow machine a
			// connection's background read can take longer to see its close.
			testwait.Until(t, 10*time.Second, "the server's goroutines to end", func() bool { return goleak.Find(ignore) == nil })
			goleak.VerifyNone(t, ignore)
		})
	}
}
