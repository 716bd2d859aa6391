package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/bench"
)

func TestMedianOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), c.in...)
		if got := medianOf(in); got != c.want {
			t.Errorf("medianOf(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Fatalf("medianOf sorted its argument: %v", in)
			}
		}
	}
}

// The table shows each system's median, the median of the rounds' ratios,
// and the worst round: the lowest throughput ratio, the highest latency one.
func TestTableShowsMediansAndWorstRound(t *testing.T) {
	e2e := func(rate float64) bench.Result { return bench.Result{Mode: "e2e", JobsPerSec: rate} }
	lat := func(p50 time.Duration) bench.Result {
		return bench.Result{Mode: "latency", P50: p50, P95: 2 * p50, P99: 3 * p50}
	}
	results := map[string]map[string][]bench.Result{
		"e2e": {
			"river-bench": {e2e(100), e2e(100), e2e(100)},
			"skiplock":    {e2e(250), e2e(190), e2e(210)},
		},
		"latency": {
			"river-bench": {lat(2 * time.Millisecond), lat(2 * time.Millisecond), lat(2 * time.Millisecond)},
			"skiplock":    {lat(800 * time.Microsecond), lat(1200 * time.Microsecond), lat(900 * time.Microsecond)},
		},
	}
	var out bytes.Buffer
	printTable(&out, results, []string{"e2e", "latency"}, 3)
	lines := map[string][]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 {
			lines[f[0]+" "+f[1]] = f
		}
	}
	check := func(row string, want ...string) {
		t.Helper()
		got := lines[row]
		if len(got) < len(want) || strings.Join(got[len(got)-len(want):], " ") != strings.Join(want, " ") {
			t.Errorf("%s: got %q, want it to end with %q\n%s", row, got, want, out.String())
		}
	}
	// river-defaults did not run; medians 100 and 210; ratios 2.5, 1.9, 2.1.
	check("e2e jobs/s", "-", "100", "210", "2.100x", "1.900x")
	// p50 ratios 0.40, 0.60, 0.45: median 0.45, worst 0.60.
	check("latency p50", "ms", "-", "2.00", "0.90", "0.450x", "0.600x")
}

// latency-remote reads as latency does: percentiles, lower is better.
func TestRemoteLatencyFigures(t *testing.T) {
	fs := figures("latency-remote")
	if len(fs) != 3 || fs[0].name != "p50 ms" || fs[2].name != "p99 ms" || fs[2].higher {
		t.Fatalf("latency-remote figures %+v, want p50, p95, p99, lower better", fs)
	}
	r := bench.Result{P99: 7 * time.Millisecond}
	if got := fs[2].get(r); got != 7 {
		t.Errorf("p99 of %s read as %v ms", r.P99, got)
	}
}

// The producer process is this command again, told which system to
// produce for, where, at what rate and for how long.
func TestProducerArgs(t *testing.T) {
	o := options{rate: 1000, latency: 10 * time.Second}
	got := strings.Join(producerArgs("river-bench", "postgres://x?search_path=s", o), " ")
	want := "--produce river-bench --database-url postgres://x?search_path=s --rate 1000 --latency 10s"
	if got != want {
		t.Errorf("producer args %q, want %q", got, want)
	}
	if _, ok := riverSystems()["river-bench"]; !ok {
		t.Error("river-bench is not a River system the producer knows")
	}
}

// Bad options name the flag before anything runs.
func TestOptionsValidate(t *testing.T) {
	good := options{rounds: 1, rate: 100, modes: "latency,latency-remote"}
	if err := good.validate(); err != nil {
		t.Fatalf("%+v: %v", good, err)
	}
	for flag, o := range map[string]options{
		"--rounds": {rounds: 0, rate: 100, modes: "latency"},
		"--rate":   {rounds: 1, rate: 0, modes: "latency"},
		"--modes":  {rounds: 1, rate: 100, modes: "latency,remote"},
	} {
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%+v: %v, want an error naming %s", o, err, flag)
		}
	}
}
