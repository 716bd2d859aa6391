package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// resultLineRE is the machine-readable last line of skiplock bench.
var resultLineRE = regexp.MustCompile(`^result mode=([\w-]+) jobs=(\d+) jobs_per_sec=\d+ p50_ms=[\d.]+ p95_ms=[\d.]+ p99_ms=[\d.]+( \w+=[\d.]+)*$`)

// lastLine answers the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestCLIBenchProcesses: --mode http runs a server process and HTTP
// worker processes, --procs library worker processes, latency-remote and
// latency-http a producer process (and latency-http a server); each prints its
// result line with the processes it ran. It asserts no speed, nor that a
// 2 s run of http or e2e got any job done (bench's TestHTTPWorker proves the
// work); a latency mode fails unless every job sent was taken.
func TestCLIBenchProcesses(t *testing.T) {
	t.Parallel() // each run has a fresh schema and its server a free port
	for _, c := range []struct {
		args []string
		mode string
		want string
	}{
		{[]string{"--mode", "http", "--procs", "2", "--claim-max", "50", "--loops", "2", "--duration", "2s"}, "http", " procs=2 "},
		{[]string{"--mode", "http", "--procs", "1", "--h2c", "--duration", "2s"}, "http", " procs=1 "},
		{[]string{"--mode", "http", "--procs", "1", "--full-jobs", "--duration", "2s"}, "http", " procs=1 "},
		// Two servers, each with a budget its sessions stay within.
		{[]string{"--mode", "http", "--procs", "2", "--servers", "2", "--pool-budget", "6", "--duration", "2s"}, "http", " servers=2 "},
		{[]string{"--mode", "e2e", "--procs", "2", "--duration", "2s"}, "e2e", " procs=2 "},
		// A producer process enqueues 40 jobs, through the library or a
		// server process; this process's workers take every one.
		{[]string{"--mode", "latency-remote", "--rate", "20", "--duration", "2s"}, "latency-remote", "jobs=40 "},
		{[]string{"--mode", "latency-http", "--rate", "20", "--duration", "2s"}, "latency-http", "jobs=40 "},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, pgtest.URL(), append([]string{"bench"}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			line := lastLine(r.stdout)
			m := resultLineRE.FindStringSubmatch(line)
			if m == nil || m[1] != c.mode || !strings.Contains(line, c.want) {
				t.Fatalf("result line %q", line)
			}
		})
	}
}

// Flags that do not go together exit 2 with one line naming the flag.
func TestCLIBenchFlags(t *testing.T) {
	for args, flag := range map[string]string{
		"--mode http --claim-max 2000":      "--claim-max",
		"--mode e2e --claim-max 10":         "--claim-max",
		"--mode drain --full-jobs":          "--full-jobs",
		"--mode latency --procs 2":          "--procs",
		"--mode http --procs 100":           "--procs",
		"--mode steady --rate 0.5":          "--rate",
		"--mode steady --sample-every 1ms":  "--sample-every",
		"--mode e2e --sample-every 1s":      "--sample-every",
		"--mode latency-remote":             "PostgreSQL",
		"--mode latency-http":               "PostgreSQL",
		"--mode e2e --servers 2":            "--servers",
		"--mode http --procs 2 --servers 3": "--servers: 3 servers for 2 worker processes",
	} {
		r := runCLI(t, "sqlite:"+t.TempDir()+"/b.db", append([]string{"bench"}, strings.Fields(args)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, flag) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("bench %s: exit %d, stderr %q; want 2 naming %s", args, r.code, r.stderr, flag)
		}
	}
}
