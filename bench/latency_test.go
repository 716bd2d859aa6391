package bench

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/server"
)

// The producer's last line carries what it sent and its insert figures,
// and reads back as it was written.
func TestProducedLineReadsBack(t *testing.T) {
	p := Produced{Sent: 3, Calls: []time.Duration{time.Millisecond, 2 * time.Millisecond, 30 * time.Millisecond}}
	sent, figures, err := ParseProduced(p.Line())
	if err != nil {
		t.Fatal(err)
	}
	if sent != 3 || figures != "insert_p50_ms=2.00 insert_p99_ms=30.00" {
		t.Errorf("read back sent=%d figures=%q from %q", sent, figures, p.Line())
	}
	for _, bad := range []string{"", "worked 3", "produced 3", "produced sent=x insert_p50_ms=1"} {
		if _, _, err := ParseProduced(bad); err == nil {
			t.Errorf("ParseProduced(%q) took it", bad)
		}
	}
}

// TestLatencyFromOtherProducers: jobs enqueued by another client that works
// nothing, through the library or through POST /v1/jobs of a server, are
// all taken by the bench's workers, which time each from its insert call.
// Here the producers run in the test's process; skiplock bench runs them in
// processes of their own (cmd/skiplock's TestCLIBenchProcesses).
func TestLatencyFromOtherProducers(t *testing.T) {
	drv, url := pgtest.Schema(t)
	const rate, d = 50, time.Second
	for _, via := range []string{"library", "http"} {
		t.Run(via, func(t *testing.T) {
			c := ProducerConfig{DatabaseURL: url, Rate: rate, Duration: d}
			if via == "http" {
				srvClient, err := skiplock.NewClient(drv, &skiplock.Config{Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				srv, err := server.New(server.Config{Client: srvClient, OpenWithoutTokens: true, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				ts := httptest.NewServer(srv.Handler())
				t.Cleanup(func() { _ = srv.Close(); ts.Close() })
				c = ProducerConfig{Server: ts.URL, Rate: rate, Duration: d}
			}
			sys, err := NewSkiplock(drv, skiplock.Config{Logger: slog.New(slog.DiscardHandler)}, 0)
			if err != nil {
				t.Fatal(err)
			}
			h := &Harness{}
			res, err := h.LatencyFrom(t.Context(), sys, "latency-remote", rate, d, func(ctx context.Context) (int64, string, error) {
				pr, pw := io.Pipe()
				done := make(chan error, 1)
				go func() { done <- RunProducer(ctx, c, pw); pw.Close() }()
				out, _ := io.ReadAll(pr)
				if err := <-done; err != nil {
					return 0, "", err
				}
				return ParseProduced(strings.TrimSpace(string(out)))
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != "latency-remote" || res.Jobs != rate || res.P50 <= 0 || res.P99 < res.P50 ||
				!strings.Contains(res.Line(), " insert_p50_ms=") {
				t.Errorf("result %s, want %d jobs with their percentiles and the insert figures", res.Line(), rate)
			}
			live, err := sys.Live(t.Context())
			if err != nil || live != 0 {
				t.Errorf("after the run: %d jobs live (%v)", live, err)
			}
		})
	}
}

// The remote modes need PostgreSQL: on SQLite another process's insert
// wakes nobody, and the figure would be the poll interval's.
func TestRemoteLatencyNeedsPostgres(t *testing.T) {
	for _, mode := range []string{"latency-remote", "latency-http"} {
		for _, url := range []string{"", "sqlite:" + t.TempDir() + "/b.db"} {
			err := Options{Mode: mode, DatabaseURL: url}.Validate()
			if err == nil || !strings.Contains(err.Error(), "--mode "+mode) || !strings.Contains(err.Error(), "PostgreSQL") {
				t.Errorf("%s on %q: %v, want an error naming the mode and PostgreSQL", mode, url, err)
			}
		}
		if err := (Options{Mode: mode, DatabaseURL: pgtest.URL()}).Validate(); err != nil {
			t.Errorf("%s on PostgreSQL: %v", mode, err)
		}
	}
}
