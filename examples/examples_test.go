package examples_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// examples are the programs and lines their output must hold: each line
// is a step of the seed's scenario the program checked before printing it.
var examples = map[string][]string{
	"hotqueue": {
		`hunter: ingested v3 "Lakes", on the watchlist DAILY (every 2s)`,
		"backfill: 1100 tracking runs of last week imported from the old system",
		"janitor: dry run: refused by the janitor's safety check: would delete",
		"archived jobs expired (3 videos' metadata)",
		"janitor: forced after the dry run: deleted",
		"stored in the vault first; the watchlist is untouched",
		"tracker: tracked v1, its metadata is gone: ghost tracking",
		"tracker: tracked v3, its metadata is gone: ghost tracking",
		"watchlist: 4 schedules (metadata left for 1 video: [video:v4])",
		"live jobs (at most the current tracking runs); archive:",
		`vault: the metadata of 3 videos the archive let go: [v1 "Cats" v2 "Dogs" v3 "Lakes"]`,
		"vault: 1100 tracking runs' stats",
		"vault metrics: queue backfill: 1100 jobs, 1100 completed",
		"hotqueue: done",
	},
	"pgmq": {
		"scrape-worker-crashed: read job 1 (video v1) with a 1s visibility timeout, then crashed",
		"scrape-worker: job 2 video v2, read 1, invisible for 2m0s",
		"video v3, invisible for 5m0s: no transcript, partial update",
		"job 1 (the crashed read): completed after 2 reads; errors: read 1: lease expired",
		"job 4 (the poison pill): failed after 3 reads",
		"queue scrape_jobs: 0 live in the hot table; archive: 3 completed, 1 failed",
		"archive: 6 completed jobs",
		"pgmq: done",
	},
	"unifiedqueue": {
		"accepted library       op=ingest job 1 queue=unified priority=1 key=library:docs:3b75bfc17d6723f5",
		"accepted content       op=ingest job 7 queue=unified priority=10",
		`rejected rename        op=ingest op: "ingest" is not allowed for kind "rename" (allowed: update)`,
		`rejected image         op=ingest kind: unknown kind "image" (strict mode)`,
		`rejected file          op=ingest payload.file_path: missing property "file_path"`,
		"rejected file          op=ingest priority: must be between 0 and 10, got 11",
		"duplicate file /src/app/main.go: duplicate=true, the live job 3, key file:code:613df3bba1eb4820",
		"processed highest priority first: [10 8 5 5 5 5 3 1]",
		"file /src/app/main.go again after its job completed: duplicate=false",
		"unifiedqueue: done",
	},
	"videopipeline": {
		"rejected transcode: payload.video_id: must be a valid uuid",
		`rejected thumbnail: kind: unknown kind "thumbnail" (strict mode)`,
		"s3-cron-scanner scan 2: transcode job 1 duplicate=true (queue transcode, max_retries 3, key transcode::a447ee1578a84992)",
		"clip-1.mp4 exists already: skipped",
		"workflow video:a1b2c3d4-e5f6-7890-abcd-ef1234567890: completed",
		"  ocr            job",
		"completed  attempt 1 of 4, progress 100% frame 3 of 3",
		"videopipeline: done",
	},
	"crawl": {
		`crawler-7: claimed job 1 docs.example, heartbeat at 50% with page token "page-3", then died`,
		"claim order: [user-waiting.example normal.example bulk.example]",
		`worker: job 1 docs.example, attempt 2, resuming at page token "page-3"`,
		"attempt 1: lease expired (lease_expired)",
		"worker: job 5 stopped at page",
		"job cancelled by request",
		"job 5 huge.example: cancelled at",
		"crawl: done",
	},
}

// bin is the directory the example programs are built into, once.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "skiplock-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		args := []string{"build", "-o", dir + string(filepath.Separator)}
		if raceEnabled {
			args = append(args, "-race")
		}
		for name := range examples {
			args = append(args, "./"+name)
		}
		if out, err := exec.Command(goTool(), args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build the examples: %v\n%s", err, out)
			return 1
		}
		bin = dir
		return m.Run()
	}()
	os.Exit(code)
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}

func TestExamplesSQLite(t *testing.T) {
	t.Parallel()
	for name, want := range examples {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runExample(t, name, want)
		})
	}
}

func TestExamplesPostgres(t *testing.T) {
	t.Parallel()
	for name, want := range examples {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, url := pgtest.Schema(t)
			out := runExample(t, name, want, "--database-url", url)
			if !strings.Contains(out, "on PostgreSQL, schema skiplock_test_") {
				t.Errorf("%s did not run on the test's schema:\n%s", name, out)
			}
		})
	}
}

// TestExamplesOwnSchema runs an example on a URL without search_path: it
// creates a schema of its own and drops it at the end.
func TestExamplesOwnSchema(t *testing.T) {
	t.Parallel()
	out := runExample(t, "crawl", examples["crawl"], "--database-url", pgtest.URL())
	if !strings.Contains(out, "(dropped at the end)") {
		t.Errorf("crawl did not use a schema of its own:\n%s", out)
	}
}

// runExample runs a built example, wants exit code 0 and every line of
// want in its output, and answers the output.
func runExample(t *testing.T, name string, want []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Dir = ".." // the repository root, where the contract files' default paths start
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	for _, line := range want {
		if !strings.Contains(string(out), line) {
			t.Errorf("%s: output lacks %q:\n%s", name, line, out)
		}
	}
	return string(out)
}
