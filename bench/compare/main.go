// Command compare times River and Skiplock with the same harness against
// the same PostgreSQL, each in a schema of its own, and prints a table.
//
//	cd bench/compare && go run . --database-url postgres://…
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mattn/go-isatty"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/bench"
)

type options struct {
	url                     string
	jobs, jobsRiverDefaults int
	e2e, latency            time.Duration
	rate                    float64
	modes, systems          string
}

func main() {
	var o options
	flag.StringVar(&o.url, "database-url", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL")
	flag.IntVar(&o.jobs, "jobs", 100_000, "jobs to drain")
	flag.IntVar(&o.jobsRiverDefaults, "jobs-river-defaults", 20_000, "jobs to drain for River at its defaults (slow)")
	flag.DurationVar(&o.e2e, "e2e", 30*time.Second, "duration of e2e")
	flag.DurationVar(&o.latency, "latency", 10*time.Second, "duration of latency")
	flag.Float64Var(&o.rate, "rate", 100, "latency: jobs enqueued per second")
	flag.StringVar(&o.modes, "modes", "drain,e2e,latency", "modes to run")
	flag.StringVar(&o.systems, "systems", "river-defaults,river-bench,skiplock", "systems to run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// system names what is compared and how to make it in a fresh schema.
type system struct {
	name string
	make func(ctx context.Context) (bench.System, func(), error)
}

func run(ctx context.Context, o options) error {
	var progress io.Writer
	if isatty.IsTerminal(os.Stderr.Fd()) {
		progress = os.Stderr
	}
	all := []system{
		{"river-defaults", riverIn(o.url, riverSettings{MaxWorkers: 100})},
		{"river-bench", riverIn(o.url, riverSettings{MaxWorkers: 2000, FetchCooldown: 2 * time.Millisecond,
			FetchInterval: 20 * time.Millisecond})},
		{"skiplock", skiplockIn(o.url)},
	}
	results := map[string]map[string]bench.Result{}
	for _, mode := range strings.Split(o.modes, ",") {
		results[mode] = map[string]bench.Result{}
		for _, s := range all {
			if !strings.Contains(","+o.systems+",", ","+s.name+",") {
				continue
			}
			res, err := runOne(ctx, s, mode, o, progress)
			if err != nil {
				return fmt.Errorf("%s %s: %w", s.name, mode, err)
			}
			fmt.Printf("%-15s %s\n", s.name, res.Line())
			results[mode][s.name] = res
		}
	}
	printTable(os.Stdout, results, strings.Split(o.modes, ","))
	return nil
}

func runOne(ctx context.Context, s system, mode string, o options, progress io.Writer) (bench.Result, error) {
	settle(ctx, o.url)
	sys, closeSys, err := s.make(ctx)
	if err != nil {
		return bench.Result{}, err
	}
	defer closeSys()
	h := &bench.Harness{Progress: progress}
	switch mode {
	case "drain":
		n := o.jobs
		if s.name == "river-defaults" {
			n = o.jobsRiverDefaults
		}
		return h.Drain(ctx, sys, n)
	case "e2e":
		return h.E2E(ctx, sys, o.e2e)
	case "latency":
		return h.Latency(ctx, sys, o.rate, o.latency)
	}
	return bench.Result{}, fmt.Errorf("unknown mode %q", mode)
}

func riverIn(url string, s riverSettings) func(context.Context) (bench.System, func(), error) {
	return func(ctx context.Context) (bench.System, func(), error) {
		pool, drop, err := freshSchema(ctx, url, "river_bench_")
		if err != nil {
			return nil, nil, err
		}
		r, err := newRiver(ctx, "river", pool, s)
		if err != nil {
			drop()
			return nil, nil, err
		}
		return r, func() { _ = r.client.Stop(context.Background()); drop() }, nil
	}
}

func skiplockIn(url string) func(context.Context) (bench.System, func(), error) {
	return func(ctx context.Context) (bench.System, func(), error) {
		db, err := bench.OpenFresh(ctx, url, false)
		if err != nil {
			return nil, nil, err
		}
		s, err := bench.NewSkiplock(db.Driver, skiplock.Config{}, 0)
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		return s, func() { _ = s.Client().Stop(context.Background()); db.Close() }, nil
	}
}

// settle collects the previous runs' garbage in this process and writes out
// what they left dirty in the database (CHECKPOINT), so that no system pays,
// in its throughput or its latency, for another's. A role that may not
// checkpoint skips that part.
func settle(ctx context.Context, url string) {
	runtime.GC()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	_, _ = conn.Exec(ctx, "CHECKPOINT")
}

// freshSchema creates a schema and answers a pool on it (default pool
// settings, as Skiplock's) and how to drop it.
func freshSchema(ctx context.Context, url, prefix string) (*pgxpool.Pool, func(), error) {
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	schema := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		return nil, nil, err
	}
	drop := func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close(context.Background())
	}
	pool, err := pgxpool.New(ctx, bench.WithSearchPath(url, schema))
	if err != nil {
		drop()
		return nil, nil, err
	}
	return pool, func() { pool.Close(); drop() }, nil
}

func printTable(w io.Writer, results map[string]map[string]bench.Result, modes []string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nmode\tfigure\triver-defaults\triver-bench\tskiplock\tskiplock/river-bench")
	for _, mode := range modes {
		r := results[mode]
		if mode == "latency" {
			for _, p := range []struct {
				name string
				get  func(bench.Result) time.Duration
			}{{"p50 ms", func(x bench.Result) time.Duration { return x.P50 }},
				{"p95 ms", func(x bench.Result) time.Duration { return x.P95 }},
				{"p99 ms", func(x bench.Result) time.Duration { return x.P99 }}} {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", mode, p.name, msOf(r, "river-defaults", p.get),
					msOf(r, "river-bench", p.get), msOf(r, "skiplock", p.get),
					ratio(float64(p.get(r["skiplock"])), float64(p.get(r["river-bench"]))))
			}
			continue
		}
		fmt.Fprintf(tw, "%s\tjobs/s\t%.0f\t%.0f\t%.0f\t%s\n", mode, r["river-defaults"].JobsPerSec,
			r["river-bench"].JobsPerSec, r["skiplock"].JobsPerSec,
			ratio(r["skiplock"].JobsPerSec, r["river-bench"].JobsPerSec))
	}
	tw.Flush()
}

func msOf(r map[string]bench.Result, name string, get func(bench.Result) time.Duration) string {
	if _, ok := r[name]; !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(get(r[name]))/float64(time.Millisecond))
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}
