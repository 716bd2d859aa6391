package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// adminBackend lets every request in as admin, as an open server does.
type adminBackend struct{}

func (adminBackend) Authenticate(context.Context, string) (*Principal, error) {
	return &Principal{Role: "admin", Name: "bench", Open: true}, nil
}

func (adminBackend) Follow(ctx context.Context, _ *string, _ func(Change)) error {
	<-ctx.Done()
	return nil
}

// BenchmarkOverview renders the overview page (GET /) on PostgreSQL holding
// SKIPLOCK_BENCH_ARCHIVED finished jobs (default 1,000,000, spread over the
// last 7 days) and SKIPLOCK_BENCH_LIVE live ones (default 100,000: pending,
// scheduled and running over 10 queues):
//
//	go test ./server/dashboard -run '^$' -bench Overview -benchtime 50x
func BenchmarkOverview(b *testing.B) {
	archived, live := envInt(b, "SKIPLOCK_BENCH_ARCHIVED", 1_000_000), envInt(b, "SKIPLOCK_BENCH_LIVE", 100_000)
	drv, url := pgtest.Schema(b)
	ctx := context.Background()
	conn := pgtest.Conn(b, url)
	start := time.Now()
	// Rows are written straight into the tables: going through the claim
	// and completion path would take far longer than the measurement.
	for i, stmt := range []string{
		`INSERT INTO skiplock_jobs_archive (id, kind, queue, state, attempt, created_at, started_at, finished_at, updated_at, errors)
		 SELECT nextval('skiplock_jobs_id_seq'), 'kind' || (i % 20), 'q' || (i % 10),
		        CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'completed' END, 1, f - interval '1 second', f - interval '1 second', f, f,
		        CASE WHEN i % 50 = 0 THEN '[{"attempt":1,"type":"boom","message":"it broke","retryable":false}]'::jsonb ELSE '[]'::jsonb END
		 FROM generate_series(1, $1::int) i, LATERAL (SELECT now() - (i::float8 / $1 * interval '7 days') AS f) t`,
		`INSERT INTO skiplock_jobs (kind, queue, state, run_at, worker_id, lease_until, attempt)
		 SELECT 'kind' || (i % 20), 'q' || (i % 10),
		        CASE WHEN i % 20 = 0 THEN 'running' WHEN i % 20 = 1 THEN 'scheduled' ELSE 'pending' END,
		        CASE WHEN i % 20 = 1 THEN now() + interval '1 hour' ELSE now() - (i % 600) * interval '1 second' END,
		        CASE WHEN i % 20 = 0 THEN 'worker-' || (i % 64) END,
		        CASE WHEN i % 20 = 0 THEN now() + interval '5 minutes' END,
		        CASE WHEN i % 20 = 0 THEN 1 ELSE 0 END
		 FROM generate_series(1, $1::int) i`,
	} {
		if _, err := conn.Exec(ctx, stmt, pgx.QueryExecModeSimpleProtocol, []int{archived, live}[i]); err != nil {
			b.Fatalf("fill: %v", err)
		}
	}
	// A settled database: autovacuum has summarised the archive's BRIN
	// ranges and gathered statistics.
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE skiplock_jobs, skiplock_jobs_archive`); err != nil {
		b.Fatal(err)
	}
	if os.Getenv("SKIPLOCK_BENCH_EXPLAIN") != "" {
		explain(b, conn, `SELECT queue, state, count(*) FROM skiplock_jobs GROUP BY queue, state`)
		explain(b, conn, `SELECT floor(extract(epoch FROM finished_at - (now() - interval '1 hour')) / 60)::int, state, count(*)
			FROM skiplock_jobs_archive WHERE finished_at >= now() - interval '1 hour' GROUP BY 1, 2`)
	}
	b.Logf("filled %d archived and %d live jobs in %s", archived, live, time.Since(start).Round(time.Millisecond))
	client, err := skiplock.NewClient(drv, &skiplock.Config{})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	New(Config{Client: client, Backend: adminBackend{}}).Register(mux)
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if rec.Code != http.StatusOK {
				b.Fatalf("GET /: %d %s", rec.Code, rec.Body)
			}
		}
	})
	b.Run("QueueList", func(b *testing.B) {
		for b.Loop() {
			if _, err := client.QueueList(ctx, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Activity", func(b *testing.B) {
		for b.Loop() {
			if _, err := client.Activity(ctx, time.Hour, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func explain(b *testing.B, conn *pgx.Conn, query string) {
	rows, err := conn.Query(context.Background(), "EXPLAIN ANALYZE "+query)
	if err != nil {
		b.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s", strings.Join(lines, "\n"))
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}
