package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCLIJobsListFilters: jobs list filters by tag, metadata, worker and
// time, and a bad filter exits 2 naming its flag.
func TestCLIJobsListFilters(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			for _, args := range [][]string{
				{"enqueue", "crawl", "--tag", "vip", "--tag", "eu", "--metadata", `{"customer":"acme","n":5}`},
				{"enqueue", "crawl", "--tag", "eu", "--metadata", `{"customer":"beta"}`, "--idempotency-key", "crawl:beta"},
			} {
				if r := runCLI(t, url, args...); r.code != 0 {
					t.Fatalf("%v: %+v", args, r)
				}
			}
			list := func(args ...string) string {
				t.Helper()
				r := runCLI(t, url, append([]string{"jobs", "list", "--json"}, args...)...)
				if r.code != 0 {
					t.Fatalf("%v: %+v", args, r)
				}
				var page struct {
					Jobs []struct{ ID int64 } `json:"jobs"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &page); err != nil {
					t.Fatal(err)
				}
				return fmt.Sprint(page.Jobs)
			}
			for want, args := range map[string][]string{
				"[{2} {1}]": {"--tag", "eu"},
				"[{1}]":     {"--tag", "eu", "--tag", "vip"},
				"[{2}]":     {"--metadata", "customer:beta"},
				"[{1}] ":    {"--metadata", "n:5", "--created-after", "2000-01-01T00:00:00Z"},
				"[]":        {"--worker-id", "nobody"},
				"[{2}]  ":   {"--idempotency-key", "crawl:beta"},
				"[] ":       {"--idempotency-key", "crawl:acme"},
			} {
				if got := list(args...); got != strings.TrimSpace(want) {
					t.Errorf("%v: %s, want %s", args, got, want)
				}
			}
			for flag, args := range map[string][]string{
				"--metadata":        {"--metadata", "nocolon"},
				"--finished-before": {"--finished-before", "soon"},
				"created_before":    {"--created-after", "2026-01-02T00:00:00Z", "--created-before", "2026-01-01T00:00:00Z"},
			} {
				r := runCLI(t, url, append([]string{"jobs", "list"}, args...)...)
				if r.code != 2 || !strings.Contains(r.stderr, flag) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
					t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", args, r.code, r.stderr, flag)
				}
			}
		})
	}
}
