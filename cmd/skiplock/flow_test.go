package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCLIWithConfig runs the command in a directory whose skiplock.yaml is
// config.
func runCLIWithConfig(t *testing.T, config, url string, args ...string) cliResult {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "skiplock.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli(t), append(args, "--database-url", url)...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// The flow rules of skiplock.yaml key the jobs a command enqueues, and
// `queues list` shows them with their use; a bad rule exits 2 naming it.
func TestCLIFlowRules(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			config := "flow:\n  - {name: per-host, queue: crawl, key: payload.host, concurrency: 2, rate: 5, per: 1s}\n"
			for _, host := range []string{"a", "b", "b"} {
				if r := runCLIWithConfig(t, config, url, "enqueue", "fetch", `{"host":"`+host+`"}`, "--queue", "crawl"); r.code != 0 {
					t.Fatalf("enqueue: %+v", r)
				}
			}
			r := runCLIWithConfig(t, config, url, "queues", "list")
			if r.code != 0 || !strings.Contains(r.stdout, "per-host") || !strings.Contains(r.stdout, "2 running, 5 per 1s") ||
				!strings.Contains(r.stdout, "payload.host") || !strings.Contains(r.stdout, "5.0 tokens") {
				t.Fatalf("queues list: %+v", r)
			}
			r = runCLIWithConfig(t, config, url, "queues", "list", "--json")
			if r.code != 0 || !strings.Contains(r.stdout, `"rule":"per-host"`) && !strings.Contains(r.stdout, `"rule": "per-host"`) {
				t.Fatalf("queues list --json: %+v", r)
			}
			for bad, want := range map[string]string{
				"flow:\n  - {name: x, queue: q, concurrency: -1}\n":   "flow[0].concurrency",
				"flow:\n  - {name: x, queue: q, rate: 5, per: 0s}\n":  "flow[0].per",
				"flow:\n  - {name: x, queue: q, rate: 5, per: two}\n": "flow[0].per",
				"flow:\n  - {name: x, queue: q, limt: 1}\n":           "limt",
			} {
				r := runCLIWithConfig(t, bad, url, "queues", "list")
				if r.code != 2 || !strings.Contains(r.stderr, want) {
					t.Errorf("%q: exit %d, stderr %q; want 2 naming %s", bad, r.code, r.stderr, want)
				}
			}
		})
	}
}
