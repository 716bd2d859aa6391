// Command compare times River and Skiplock with the same harness against
// the same PostgreSQL, each in a schema of its own, and prints a table.
// With --rounds N it runs every mode N times, in alternating order, and the
// table shows medians and the worst round. Mode latency-remote enqueues
// from a producer process of its own (this command with --produce);
// latency-http, for Skiplock, posts to a `skiplock serve` built from this
// tree, and for River (which has no server) is latency-remote.
//
//	cd bench/compare && go run . --database-url postgres://… --rounds 5
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mattn/go-isatty"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/bench"
	"github.com/skiplock/skiplock/driver/pgdriver"
)

type options struct {
	url                     string
	jobs, jobsRiverDefaults int
	e2e, latency            time.Duration
	rate                    float64
	modes, systems          string
	rounds                  int
	// produce makes this process the producer of latency-remote for the
	// system it names, on --database-url.
	produce string
}

// allModes are the modes compare runs.
var allModes = []string{"drain", "e2e", "latency", "latency-remote", "latency-http"}

func main() {
	var o options
	flag.StringVar(&o.url, "database-url", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL")
	flag.IntVar(&o.jobs, "jobs", 100_000, "jobs to drain")
	flag.IntVar(&o.jobsRiverDefaults, "jobs-river-defaults", 20_000, "jobs to drain for River at its defaults (slow)")
	flag.DurationVar(&o.e2e, "e2e", 30*time.Second, "duration of e2e")
	flag.DurationVar(&o.latency, "latency", 10*time.Second, "duration of the latency modes")
	flag.Float64Var(&o.rate, "rate", 100, "latency modes: jobs enqueued per second")
	flag.StringVar(&o.modes, "modes", strings.Join(allModes, ","), "modes to run")
	flag.StringVar(&o.systems, "systems", "river-defaults,river-bench,skiplock", "systems to run")
	flag.IntVar(&o.rounds, "rounds", 1, "runs of each mode for each system, in alternating order; the table shows medians")
	flag.StringVar(&o.produce, "produce", "", "run as the producer process of latency-remote for this system (compare starts it)")
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	work := run
	if o.produce != "" {
		work = func(ctx context.Context, o options) error { return produce(ctx, o.produce, o) }
	}
	if err := work(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func (o options) validate() error {
	if o.rounds < 1 {
		return fmt.Errorf("--rounds must be at least 1")
	}
	if o.rate < 1 {
		return fmt.Errorf("--rate: must be at least 1 per second, got %g", o.rate)
	}
	for _, m := range strings.Split(o.modes, ",") {
		if !slices.Contains(allModes, m) {
			return fmt.Errorf("--modes: want some of %s, got %q", strings.Join(allModes, ","), m)
		}
	}
	return nil
}

// system names what is compared and how to make it in a fresh schema; the
// URL made reaches that schema (for a producer process).
type system struct {
	name string
	make func(ctx context.Context) (sys bench.System, url string, close func(), err error)
}

// riverSystems are River's settings compared: its defaults, and those of
// River's own benchmark.
func riverSystems() map[string]riverSettings {
	return map[string]riverSettings{
		"river-defaults": {MaxWorkers: 100},
		"river-bench": {MaxWorkers: 2000, FetchCooldown: 2 * time.Millisecond,
			FetchInterval: 20 * time.Millisecond},
	}
}

func run(ctx context.Context, o options) error {
	var progress io.Writer
	if isatty.IsTerminal(os.Stderr.Fd()) {
		progress = os.Stderr
	}
	rs := riverSystems()
	all := []system{
		{"river-defaults", riverIn(o.url, rs["river-defaults"])},
		{"river-bench", riverIn(o.url, rs["river-bench"])},
		{"skiplock", skiplockIn(o.url)},
	}
	var chosen []system
	for _, s := range all {
		if strings.Contains(","+o.systems+",", ","+s.name+",") {
			chosen = append(chosen, s)
		}
	}
	modes := strings.Split(o.modes, ",")
	results := map[string]map[string][]bench.Result{}
	for _, mode := range modes {
		results[mode] = map[string][]bench.Result{}
		for round := 1; round <= o.rounds; round++ {
			// Even rounds run the systems in reverse order, so that drift
			// of the machine's speed during a round favours neither.
			order := slices.Clone(chosen)
			if round%2 == 0 {
				slices.Reverse(order)
			}
			for _, s := range order {
				res, err := runOne(ctx, s, mode, o, progress)
				if err != nil {
					return fmt.Errorf("%s %s: %w", s.name, mode, err)
				}
				fmt.Printf("%-15s %s\n", s.name, res.Line())
				results[mode][s.name] = append(results[mode][s.name], res)
			}
			if o.rounds > 1 {
				fmt.Printf("round %d/%d %s: %s\n", round, o.rounds, mode, roundRatios(mode, results[mode], round-1))
			}
		}
	}
	printTable(os.Stdout, results, modes, o.rounds)
	return nil
}

func runOne(ctx context.Context, s system, mode string, o options, progress io.Writer) (bench.Result, error) {
	settle(ctx, o.url)
	sys, url, closeSys, err := s.make(ctx)
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
	case "latency-http":
		if sk, ok := sys.(*bench.Skiplock); ok {
			exe, err := skiplockExe()
			if err != nil {
				return bench.Result{}, err
			}
			return bench.LatencyHTTP(ctx, exe, url, sk, h, o.rate, o.latency)
		}
		// River has no HTTP server: its producer process inserts through
		// its client, as in latency-remote.
		fallthrough
	case "latency-remote":
		return h.LatencyFrom(ctx, sys, mode, o.rate, o.latency, func(ctx context.Context) (int64, string, error) {
			return runProducerProcess(ctx, s.name, url, o)
		})
	}
	return bench.Result{}, fmt.Errorf("unknown mode %q", mode)
}

func riverIn(url string, s riverSettings) func(context.Context) (bench.System, string, func(), error) {
	return func(ctx context.Context) (bench.System, string, func(), error) {
		pool, schemaURL, drop, err := freshSchema(ctx, url, "river_bench_")
		if err != nil {
			return nil, "", nil, err
		}
		r, err := newRiver(ctx, "river", pool, s)
		if err != nil {
			drop()
			return nil, "", nil, err
		}
		return r, schemaURL, func() { _ = r.client.Stop(context.Background()); drop() }, nil
	}
}

func skiplockIn(url string) func(context.Context) (bench.System, string, func(), error) {
	return func(ctx context.Context) (bench.System, string, func(), error) {
		db, err := bench.OpenFresh(ctx, url, "", false, pgdriver.Pools{})
		if err != nil {
			return nil, "", nil, err
		}
		s, err := bench.NewSkiplock(db.Driver, skiplock.Config{}, 0)
		if err != nil {
			db.Close()
			return nil, "", nil, err
		}
		return s, db.URL, func() { _ = s.Client().Stop(context.Background()); db.Close() }, nil
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
// settings, as Skiplock's), the URL that reaches it, and how to drop it.
func freshSchema(ctx context.Context, url, prefix string) (*pgxpool.Pool, string, func(), error) {
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, "", nil, err
	}
	schema := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		return nil, "", nil, err
	}
	drop := func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close(context.Background())
	}
	schemaURL := bench.WithSearchPath(url, schema)
	pool, err := pgxpool.New(ctx, schemaURL)
	if err != nil {
		drop()
		return nil, "", nil, err
	}
	return pool, schemaURL, func() { pool.Close(); drop() }, nil
}

// figure is one number of a result and how a ratio of it reads: for
// throughput higher is better, for latency lower.
type figure struct {
	name   string
	get    func(bench.Result) float64
	higher bool
}

func figures(mode string) []figure {
	if !strings.HasPrefix(mode, "latency") {
		return []figure{{"jobs/s", func(r bench.Result) float64 { return r.JobsPerSec }, true}}
	}
	msOf := func(get func(bench.Result) time.Duration) func(bench.Result) float64 {
		return func(r bench.Result) float64 { return float64(get(r)) / float64(time.Millisecond) }
	}
	return []figure{
		{"p50 ms", msOf(func(r bench.Result) time.Duration { return r.P50 }), false},
		{"p95 ms", msOf(func(r bench.Result) time.Duration { return r.P95 }), false},
		{"p99 ms", msOf(func(r bench.Result) time.Duration { return r.P99 }), false},
	}
}

// roundRatios is skiplock/river-bench of each figure of one round.
func roundRatios(mode string, r map[string][]bench.Result, i int) string {
	sk, rb := r["skiplock"], r["river-bench"]
	if len(sk) <= i || len(rb) <= i {
		return "-"
	}
	var parts []string
	for _, f := range figures(mode) {
		parts = append(parts, fmt.Sprintf("%s %s", f.name, ratio(f.get(sk[i]), f.get(rb[i]))))
	}
	return strings.Join(parts, ", ")
}

// printTable prints the median of each figure over the rounds and the
// median ratio; with several rounds also the worst round's ratio (lowest
// throughput ratio, highest latency ratio).
func printTable(w io.Writer, results map[string]map[string][]bench.Result, modes []string, rounds int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "\nmode\tfigure\triver-defaults\triver-bench\tskiplock\tskiplock/river-bench"
	if rounds > 1 {
		head = fmt.Sprintf("\nmedians of %d rounds\nmode\tfigure\triver-defaults\triver-bench\tskiplock\tskiplock/river-bench\tworst round", rounds)
	}
	fmt.Fprintln(tw, head)
	for _, mode := range modes {
		r := results[mode]
		for _, f := range figures(mode) {
			med := func(name string) string {
				if len(r[name]) == 0 {
					return "-"
				}
				if f.higher {
					return fmt.Sprintf("%.0f", median(r[name], f.get))
				}
				return fmt.Sprintf("%.2f", median(r[name], f.get))
			}
			var ratios []float64
			for i := range min(len(r["skiplock"]), len(r["river-bench"])) {
				if b := f.get(r["river-bench"][i]); b > 0 {
					ratios = append(ratios, f.get(r["skiplock"][i])/b)
				}
			}
			line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", mode, f.name, med("river-defaults"), med("river-bench"),
				med("skiplock"), ratioOf(ratios, medianOf))
			if rounds > 1 {
				worst := slices.Min[[]float64]
				if !f.higher {
					worst = slices.Max[[]float64]
				}
				line += "\t" + ratioOf(ratios, worst)
			}
			fmt.Fprintln(tw, line)
		}
	}
	tw.Flush()
}

func median(rs []bench.Result, get func(bench.Result) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = get(r)
	}
	return medianOf(xs)
}

func medianOf(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

func ratioOf(xs []float64, pick func([]float64) float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return ratioText(pick(xs))
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return ratioText(a / b)
}

// ratioText shows three decimals: a target of 2x must not read as met at
// 1.996.
func ratioText(r float64) string { return fmt.Sprintf("%.3fx", r) }
