package bench

import (
	"database/sql"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestRunModes runs each mode briefly on both databases: the harness works
// and leaves nothing behind. It asserts no speed.
func TestRunModes(t *testing.T) {
	for _, db := range []struct{ name, url string }{{"postgres", pgtest.URL()}, {"sqlite", ""}} {
		for _, o := range []Options{
			{Mode: "drain", Jobs: 300, Batch: 100},
			{Mode: "drain", Jobs: 300, Batch: 100, AfterIdle: true},
			{Mode: "insert", Jobs: 300, Batch: 100, Producers: 2},
			{Mode: "e2e", Duration: 3 * time.Second, Batch: 50, Scheduled: 10},
			{Mode: "latency", Duration: time.Second, Rate: 20},
			{Mode: "steady", Duration: 2 * time.Second, Rate: 50, SampleEvery: 100 * time.Millisecond},
			{Mode: "commit", Duration: time.Second, Rate: 20},
		} {
			name := db.name + "/" + o.Mode
			if o.AfterIdle {
				name += "-after-idle"
			}
			t.Run(name, func(t *testing.T) {
				o.DatabaseURL = db.url
				res, err := Run(t.Context(), o)
				if err != nil {
					t.Fatal(err)
				}
				line := res.Line()
				if !strings.HasPrefix(line, "result mode="+o.Mode+" jobs=") || !strings.Contains(line, " p99_ms=") {
					t.Errorf("result line %q", line)
				}
				if o.Mode == "steady" {
					want := ` p50_ms=[\d.]+ p95_ms=[\d.]+ p99_ms=[\d.]+ claim_p95_ms=[\d.]+`
					if db.name == "postgres" {
						want += ` dead_tuples_median=\d+ dead_tuples_max=\d+`
					}
					if !regexp.MustCompile(want + "$").MatchString(line) {
						t.Errorf("steady result line %q", line)
					}
				}
				if res.Jobs <= 0 {
					t.Errorf("%s worked no jobs: %s", o.Mode, line)
				}
			})
		}
	}
}

// TestLatencyClaimedTimesClaims runs latency with --claimed and --bulk on
// both databases: every job is timed during the bulk actions or after, and
// the claims that took them are counted (without --claimed there are no
// claim figures: every job starts at its insert).
func TestLatencyClaimedTimesClaims(t *testing.T) {
	figure := func(line, name string) int {
		m := regexp.MustCompile(" " + name + `=(\d+) `).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("no %s in %q", name, line)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	for _, db := range []struct{ name, url string }{{"postgres", pgtest.URL()}, {"sqlite", ""}} {
		t.Run(db.name, func(t *testing.T) {
			res, err := Run(t.Context(), Options{DatabaseURL: db.url, Mode: "latency", Claimed: true,
				Bulk: 300, BulkBatch: 50, Duration: 2 * time.Second, Rate: 50})
			if err != nil {
				t.Fatal(err)
			}
			line := res.Line()
			for _, f := range []string{"during_claim_p99_ms", "after_claim_p99_ms"} {
				if !strings.Contains(line, " "+f+"=") {
					t.Errorf("no %s in %q", f, line)
				}
			}
			jobs := figure(line, "during_jobs") + figure(line, "after_jobs")
			claims := figure(line, "during_claims") + figure(line, "after_claims")
			if jobs != int(res.Jobs) || claims == 0 || claims > jobs {
				t.Errorf("%d jobs, %d of them timed, taken by %d claims: want every job claimed (%q)", res.Jobs, jobs, claims, line)
			}
		})
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		o    Options
		flag string
	}{
		{Options{Mode: "fast"}, "--mode"},
		{Options{Mode: "drain", Workers: 20000}, "--workers"},
		{Options{Mode: "latency", Rate: -1}, "--rate"},
		{Options{Mode: "drain", Backlog: 10}, "--backlog"},
		{Options{Mode: "e2e", AfterIdle: true}, "--after-idle"},
		{Options{Mode: "steady", Rate: 0.5}, "--rate"},
		{Options{Mode: "steady", SampleEvery: time.Millisecond}, "--sample-every"},
		{Options{Mode: "e2e", SampleEvery: time.Second}, "--sample-every"},
		{Options{Mode: "latency", Procs: 2}, "--procs"},
		{Options{Mode: "drain", VacuumEvery: time.Second}, "--vacuum-every"},
		{Options{Mode: "steady", VacuumEvery: time.Millisecond}, "--vacuum-every"},
		{Options{Mode: "http", Procs: 65}, "--procs"},
		{Options{Mode: "http", ClaimMax: 1001}, "--claim-max"},
		{Options{Mode: "e2e", ClaimMax: 10}, "--claim-max"},
		{Options{Mode: "e2e", H2C: true}, "--h2c"},
		{Options{Mode: "e2e", Claimed: true}, "--claimed"},
		{Options{Mode: "commit", Workers: 8}, "--mode commit"},
		{Options{Mode: "commit", Rate: 0.5}, "--rate"},
		{Options{Mode: "http", Loops: 1000}, "--loops"},
		{Options{Mode: "e2e", Procs: 4, Servers: 2}, "--servers"},
		{Options{Mode: "http", Servers: 17, Procs: 20}, "--servers"},
		{Options{Mode: "http", Servers: -1}, "--servers"},
		{Options{Mode: "http", Servers: 5}, "--servers: 5 servers for 4 worker processes"},
		{Options{Mode: "http", Servers: 3, Procs: 2}, "--servers: 3 servers for 2 worker processes"},
	} {
		err := c.o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", c.o, err, c.flag)
		}
	}
	for _, o := range []Options{{Mode: "http", Servers: 4}, {Mode: "http", Servers: 4, Procs: 8}} {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", o, err)
		}
	}
}

// Worker processes' arguments carry the run's settings.
func TestWorkerArgs(t *testing.T) {
	o := Options{Mode: "http", ClaimMax: 50, Loops: 3, H2C: true}
	got := strings.Join(o.WorkerArgs(1, "http://127.0.0.1:9", "postgres://x"), " ")
	want := "bench-worker --queue bench --server http://127.0.0.1:9 --claim-max 50 --loops 3 --worker-id bench-2 --h2c"
	if got != want {
		t.Errorf("http worker args %q, want %q", got, want)
	}
	o = Options{Mode: "e2e", Procs: 2, Workers: 10, FetchCooldown: 2 * time.Millisecond}
	got = strings.Join(o.WorkerArgs(0, "", "postgres://x"), " ")
	want = "bench-worker --queue bench --database-url postgres://x --workers 10 --fetch-cooldown 2ms"
	if got != want {
		t.Errorf("library worker args %q, want %q", got, want)
	}
}

// --mode commit times bare inserts into a table of its own, one per slot
// of --rate, and drops that table after: a SQLite file it was given keeps
// nothing of it.
func TestCommitModeLeavesNoTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.db")
	res, err := Run(t.Context(), Options{DatabaseURL: "sqlite:" + path, Mode: "commit", Duration: time.Second, Rate: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs != 20 || res.P50 <= 0 || res.P99 < res.P50 {
		t.Errorf("commit result %s, want 20 inserts with their percentiles", res.Line())
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = ?`, commitTable).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("%s is still in the file after the run", commitTable)
	}
}
