package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// BenchmarkExport measures Export of SKIPLOCK_VAULT_BENCH_JOBS (default
// 10,000) completed jobs to a directory, on SQLite and PostgreSQL, and
// reports the bytes written per job. docs/vault.md has figures for 1M:
//
//	SKIPLOCK_VAULT_BENCH_JOBS=1000000 go test ./vault -run '^$' -bench Export -benchtime 1x -timeout 2h
func BenchmarkExport(b *testing.B) {
	n := 10_000
	if s := os.Getenv("SKIPLOCK_VAULT_BENCH_JOBS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("SKIPLOCK_VAULT_BENCH_JOBS=%q: want a positive number", s)
		}
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
			var d driver.Driver
			if name == "sqlite" {
				d = sqlitetest.New(b)
			} else {
				d, _ = pgtest.Schema(b)
			}
			c := newClient(b, d)
			start := time.Now()
			completeMany(b, c, n)
			b.Logf("%d completed jobs made in %.1f s", n, time.Since(start).Seconds())
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "vault")
				v, err := Open(context.Background(), dir)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := Export(context.Background(), c, v, ExportParams{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if res.Stored != n {
					b.Fatalf("exported %d jobs, want %d", res.Stored, n)
				}
				parts, _ := v.Parts(context.Background(), time.Time{}, time.Time{})
				var bytes int64
				for _, p := range parts {
					bytes += p.Bytes
				}
				b.ReportMetric(float64(bytes), "bytes")
				b.ReportMetric(float64(bytes)/float64(n), "bytes/job")
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// completeMany inserts n jobs with a small payload and completes them
// with a small result, a thousand at a time.
func completeMany(b *testing.B, c *skiplock.Client, n int) {
	ctx := context.Background()
	for start := 0; start < n; start += 1000 {
		var batch []skiplock.InsertManyParams
		for i := start; i < min(n, start+1000); i++ {
			batch = append(batch, skiplock.InsertManyParams{
				Args: skiplock.RawArgs{KindName: "transcode", Payload: json.RawMessage(fmt.Sprintf(
					`{"video_id":"v%09d","format":"h264","width":1920,"checksum":"%016x"}`, i, uint64(i)*0x9E3779B97F4A7C15))},
				Opts: &skiplock.InsertOpts{Queue: []string{"video", "mail", "ingest"}[i%3]}})
		}
		if _, err := c.InsertMany(ctx, batch); err != nil {
			b.Fatal(err)
		}
		for _, q := range []string{"video", "mail", "ingest"} {
			jobs, err := c.Claim(ctx, skiplock.ClaimParams{Queue: q, WorkerID: "bench", Max: 1000, Lease: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			done := make([]driver.CompleteParams, len(jobs))
			for i, j := range jobs {
				done[i] = driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: j.WorkerID},
					Result: json.RawMessage(fmt.Sprintf(`{"bytes":%d,"ok":true}`, (j.ID*7919)%10_000_000))}
			}
			if _, err := c.Driver().JobCompleteMany(ctx, done); err != nil {
				b.Fatal(err)
			}
		}
	}
}
