package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeJSONL writes lines to a file and answers its path.
func writeJSONL(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// countJobs answers how many jobs `jobs list` shows.
func countJobs(t *testing.T, url string) int {
	t.Helper()
	return listedJobs(t, url, "--limit", "10000")
}

// listedJobs answers how many jobs `jobs list --json` shows with args.
func listedJobs(t *testing.T, url string, args ...string) int {
	t.Helper()
	r := runCLI(t, url, append([]string{"jobs", "list", "--json"}, args...)...)
	var page struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &page) != nil {
		t.Fatalf("jobs list: %+v", r)
	}
	return len(page.Jobs)
}

func TestCLIEnqueueJSONL(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			bad := writeJSONL(t, `{"kind":"a"}`, `{"kind":"b","payload":{"n":1},"queue":"q"}`, `{"kind":"c","priority":11}`, `{"kind":"d"}`)
			r := runCLI(t, url, "enqueue", "--jsonl", bad)
			if r.code != 2 || !strings.HasPrefix(r.stderr, "skiplock: line 3: priority: must be between 0 and 10") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("bad line 3: %+v", r)
			}
			if n := countJobs(t, url); n != 0 {
				t.Fatalf("all or nothing stored %d jobs", n)
			}
			r = runCLI(t, url, "enqueue", "--jsonl", bad, "--partial")
			if r.code != 2 || !strings.Contains(r.stderr, "line 3: priority") || !strings.Contains(r.stderr, "2 jobs inserted before it") {
				t.Fatalf("--partial: %+v", r)
			}
			if n := countJobs(t, url); n != 2 {
				t.Fatalf("--partial stored %d jobs, want the 2 before line 3", n)
			}
			if r := runCLI(t, url, "enqueue", "--jsonl", bad, "--queue", "x"); r.code != 2 || !strings.Contains(r.stderr, "--queue") {
				t.Fatalf("job flag with --jsonl: %+v", r)
			}

			lines := make([]string, 20000)
			for i := range lines {
				lines[i] = fmt.Sprintf(`{"kind":"bulk","payload":{"i":%d},"queue":"q%d"}`, i, i%3)
			}
			r = runCLI(t, url, "enqueue", "--jsonl", writeJSONL(t, lines...))
			if r.code != 0 || !strings.HasPrefix(r.stdout, "inserted 20,000 jobs in ") || strings.Contains(r.stdout+r.stderr, "\r") || r.stderr != "" {
				t.Fatalf("20,000 lines: %+v", r)
			}
			if n := listedJobs(t, url, "--kind", "bulk", "--limit", "10000"); n != 10000 {
				t.Fatalf("listed %d bulk jobs, want the limit 10000", n)
			}
		})
	}
}
