package skiplockprom_test

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/skiplockprom"
)

type mailArgs struct{}

func (mailArgs) Kind() string { return "mail" }

// An in-process user registers the collector and reads the cluster's
// queue metrics without a server, on either database.
func TestCollectorExportsTheClustersQueues(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) driver.Driver{
		"postgres": func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d },
		"sqlite":   func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			client, err := skiplock.NewClient(open(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := client.Insert(ctx, mailArgs{}, &skiplock.InsertOpts{Queue: "mail"}); err != nil {
					t.Fatal(err)
				}
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(skiplockprom.NewCollector(client))
			want := `
# HELP skiplock_jobs Live jobs by queue, kind and state.
# TYPE skiplock_jobs gauge
skiplock_jobs{kind="mail",queue="mail",state="pending"} 3
# HELP skiplock_queue_jobs Live jobs of a queue by state.
# TYPE skiplock_queue_jobs gauge
skiplock_queue_jobs{queue="mail",state="paused"} 0
skiplock_queue_jobs{queue="mail",state="pending"} 3
skiplock_queue_jobs{queue="mail",state="running"} 0
skiplock_queue_jobs{queue="mail",state="scheduled"} 0
skiplock_queue_jobs{queue="mail",state="waiting"} 0
# HELP skiplock_database_up 1 when the database answered the scrape.
# TYPE skiplock_database_up gauge
skiplock_database_up 1
`
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
				"skiplock_jobs", "skiplock_queue_jobs", "skiplock_database_up"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// gauges answers the value of every unlabelled gauge a scrape of reg shows,
// by name.
func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if m := f.GetMetric(); f.GetType().String() == "GAUGE" && len(m) == 1 && len(m[0].GetLabel()) == 0 {
			out[f.GetName()] = m[0].GetGauge().GetValue()
		}
	}
	return out
}

// On PostgreSQL the scrape shows what the hot table takes with its spill
// tables, and how many spill tables there are: none normally, one once
// spilling has started, whose size the bytes then include.
func TestCollectorExportsTheHotTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	drv, _ := pgtest.Schema(t)
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Insert(ctx, mailArgs{}, &skiplock.InsertOpts{Queue: "mail"}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(skiplockprom.NewCollector(client))
	var hot int64
	if err := drv.Pool().QueryRow(ctx, `SELECT pg_total_relation_size('skiplock_jobs')`).Scan(&hot); err != nil {
		t.Fatal(err)
	}
	before := gauges(t, reg)
	if got, ok := before["skiplock_hot_spill_tables"]; !ok || got != 0 {
		t.Errorf("skiplock_hot_spill_tables %v (exported %v), want 0", got, ok)
	}
	if got := before["skiplock_hot_table_bytes"]; got <= 0 || got != float64(hot) {
		t.Errorf("skiplock_hot_table_bytes %v, want the hot table's %d", got, hot)
	}

	s, err := drv.HotTableSpill(ctx, true, driver.SpillLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Opened == "" {
		t.Fatalf("no spill table opened: %+v", s)
	}
	var spill int64
	if err := drv.Pool().QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, s.Opened).Scan(&spill); err != nil {
		t.Fatal(err)
	}
	if spill <= 0 {
		t.Fatalf("spill table %s takes %d bytes", s.Opened, spill)
	}
	after := gauges(t, reg)
	if got := after["skiplock_hot_spill_tables"]; got != 1 {
		t.Errorf("skiplock_hot_spill_tables %v once spilling, want 1", got)
	}
	if got, want := after["skiplock_hot_table_bytes"], before["skiplock_hot_table_bytes"]+float64(spill); got != want {
		t.Errorf("skiplock_hot_table_bytes %v once spilling, want %v (%v before, plus %d of %s)",
			got, want, before["skiplock_hot_table_bytes"], spill, s.Opened)
	}
}

// SQLite has no spill tables and no cheap size of its live jobs: the hot
// table's gauges are left out rather than made up.
func TestCollectorLeavesOutTheHotTableOnSQLite(t *testing.T) {
	t.Parallel()
	client, err := skiplock.NewClient(sqlitetest.New(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(skiplockprom.NewCollector(client))
	got := gauges(t, reg)
	if got["skiplock_database_up"] != 1 {
		t.Fatalf("skiplock_database_up %v", got["skiplock_database_up"])
	}
	for _, name := range []string{"skiplock_hot_table_bytes", "skiplock_hot_spill_tables"} {
		if v, ok := got[name]; ok {
			t.Errorf("%s %v on SQLite, want it left out", name, v)
		}
	}
}

var (
	archived = flag.Int("skiplockprom.archived", 1_000_000, "finished jobs in the archive for BenchmarkCollect")
	live     = flag.Int("skiplockprom.live", 100_000, "live jobs for BenchmarkCollect")
)

// BenchmarkCollect times one scrape of the collector on PostgreSQL with
// -skiplockprom.archived finished jobs spread over the last week (inserted
// in the order they finished, as the archive fills) and
// -skiplockprom.live pending jobs:
//
//	go test -run XXX -bench Collect -benchtime 20x ./skiplockprom/
func BenchmarkCollect(b *testing.B) {
	drv, url := pgtest.Schema(b)
	conn := pgtest.Conn(b, url)
	ctx := context.Background()
	for i, stmt := range []string{
		// Every past day has its partition, as the leader prepares them.
		`DO $$ BEGIN FOR d IN 1..8 LOOP EXECUTE format(
		   'CREATE TABLE skiplock_jobs_archive_%s PARTITION OF skiplock_jobs_archive FOR VALUES FROM (%L) TO (%L)',
		   to_char(current_date - d, 'YYYYMMDD'), (current_date - d)::timestamptz AT TIME ZONE 'UTC',
		   (current_date - d + 1)::timestamptz AT TIME ZONE 'UTC'); END LOOP; END $$`,
		`INSERT INTO skiplock_jobs_archive (id, kind, queue, state, finished_at)
		 SELECT i, 'kind' || (i % 20), 'queue' || (i % 5), CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'completed' END,
		        now() - ($1::bigint - i) * (604800.0 / $1::bigint) * interval '1 second'
		 FROM generate_series(1, $1::bigint) i`,
		`INSERT INTO skiplock_jobs (kind, queue, state) SELECT 'kind' || (i % 20), 'queue' || (i % 5), 'pending'
		 FROM generate_series(1, $1::bigint) i`,
		`VACUUM ANALYZE`,
	} {
		args := [][]any{nil, {*archived}, {*live}, nil}[i]
		if _, err := conn.Exec(ctx, stmt, args...); err != nil {
			b.Fatal(err)
		}
	}
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(skiplockprom.NewCollector(client))
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/scrape")
}
