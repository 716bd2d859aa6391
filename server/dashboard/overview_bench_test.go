package dashboard

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
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

// BenchmarkOverview renders the overview page (GET /) on PostgreSQL and on
// SQLite, each holding SKIPLOCK_BENCH_ARCHIVED finished jobs (default
// 1,000,000, spread over the last 7 days) and SKIPLOCK_BENCH_LIVE live ones
// (default 100,000: pending, scheduled and running over 10 queues and 64
// workers), and times the two calls the page makes:
//
//	go test ./server/dashboard -run '^$' -bench Overview -benchtime 30x
func BenchmarkOverview(b *testing.B) {
	archived, live := envInt(b, "SKIPLOCK_BENCH_ARCHIVED", 1_000_000), envInt(b, "SKIPLOCK_BENCH_LIVE", 100_000)
	for _, db := range []struct {
		name string
		fill func(b *testing.B, archived, live int) *skiplock.Client
	}{{"postgres", fillPostgres}, {"sqlite", fillSQLite}} {
		b.Run(db.name, func(b *testing.B) {
			start := time.Now()
			client := db.fill(b, archived, live)
			b.Logf("filled %d archived and %d live jobs in %s", archived, live, time.Since(start).Round(time.Millisecond))
			benchOverview(b, client)
		})
	}
}

func benchOverview(b *testing.B, client *skiplock.Client) {
	ctx := context.Background()
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

// fillPostgres writes the rows straight into the tables: going through the
// claim and completion path would take far longer than the measurement.
func fillPostgres(b *testing.B, archived, live int) *skiplock.Client {
	drv, url := pgtest.Schema(b)
	ctx := context.Background()
	conn := pgtest.Conn(b, url)
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
	return benchClient(b, drv)
}

// fillSQLite writes the same jobs as fillPostgres into a SQLite file
// (times in microseconds since the epoch).
func fillSQLite(b *testing.B, archived, live int) *skiplock.Client {
	drv := sqlitetest.New(b)
	ctx := context.Background()
	now := time.Now().UnixMicro()
	for _, stmt := range []string{
		`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < @n)
		 INSERT INTO skiplock_jobs_archive (id, kind, queue, state, attempt, run_at, created_at, started_at, finished_at, updated_at, errors)
		 SELECT i, 'kind' || (i % 20), 'q' || (i % 10), CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'completed' END, 1,
		        f - 1000000, f - 1000000, f - 1000000, f, f,
		        CASE WHEN i % 50 = 0 THEN '[{"attempt":1,"type":"boom","message":"it broke","retryable":false}]' ELSE '[]' END
		 FROM (SELECT i, @now - i * (604800000000 / @n) AS f FROM s)`,
		`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < @live)
		 INSERT INTO skiplock_jobs (id, kind, queue, state, run_at, created_at, updated_at, worker_id, lease_until, attempt)
		 SELECT @n + i, 'kind' || (i % 20), 'q' || (i % 10),
		        CASE WHEN i % 20 = 0 THEN 'running' WHEN i % 20 = 1 THEN 'scheduled' ELSE 'pending' END,
		        CASE WHEN i % 20 = 1 THEN @now + 3600000000 ELSE @now - (i % 600) * 1000000 END, @now, @now,
		        CASE WHEN i % 20 = 0 THEN 'worker-' || (i % 64) END,
		        CASE WHEN i % 20 = 0 THEN @now + 300000000 END, CASE WHEN i % 20 = 0 THEN 1 ELSE 0 END
		 FROM s`,
	} {
		if _, err := drv.DB().ExecContext(ctx, stmt, sql.Named("n", max(archived, 1)), sql.Named("live", live),
			sql.Named("now", now)); err != nil {
			b.Fatalf("fill: %v", err)
		}
	}
	return benchClient(b, drv)
}

func benchClient(b *testing.B, drv driver.Driver) *skiplock.Client {
	client, err := skiplock.NewClient(drv, &skiplock.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return client
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
