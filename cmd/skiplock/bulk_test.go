package main

import (
	"strings"
	"testing"
)

func TestCLIJobsBulk(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			jobs := writeJSONL(t, `{"kind":"a","queue":"q1"}`, `{"kind":"a","queue":"q2"}`, `{"kind":"b","queue":"q1"}`,
				`{"kind":"a","queue":"q1","tenant":"t"}`)
			if r := runCLI(t, url, "enqueue", "--jsonl", jobs); r.code != 0 {
				t.Fatalf("enqueue: %+v", r)
			}
			ok := func(want string, args ...string) {
				t.Helper()
				r := runCLI(t, url, args...)
				if r.code != 0 || !strings.HasPrefix(r.stdout, want) || strings.Contains(r.stdout+r.stderr, "\r") {
					t.Fatalf("%v: %+v, want %q", args, r, want)
				}
			}
			refused := func(want string, args ...string) {
				t.Helper()
				r := runCLI(t, url, args...)
				if r.code != 2 || !strings.Contains(r.stderr, want) {
					t.Fatalf("%v: %+v, want exit 2 with %q", args, r, want)
				}
			}
			ok("would cancel 3 jobs\n", "jobs", "cancel", "--kind", "a", "--dry-run")
			ok("cancelled 2 jobs of 2 matched in ", "jobs", "cancel", "--kind", "a", "--queue", "q1,q2", "--older-than", "0s", "--state", "pending", "--batch-size", "1", "--tenant", "")
			ok("would retry 2 jobs\n", "jobs", "retry", "--state", "cancelled", "--dry-run")
			ok(`{
  "action": "retry",
  "done": 0,
  "matched": 2
}`, "jobs", "retry", "--state", "cancelled", "--dry-run", "--json")
			ok("retried 1 jobs of 1 matched", "jobs", "retry", "--queue", "q2")
			ok("would delete 1 jobs\n", "jobs", "delete", "--kind", "a", "--dry-run")
			ok("would delete 0 jobs\n", "jobs", "delete", "--kind", "a", "--older-than", "24h", "--dry-run")
			ok("deleted 1 jobs of 1 matched", "jobs", "delete", "--kind", "a")
			ok("would cancel 3 jobs\n", "jobs", "cancel", "--state", "pending", "--dry-run")

			refused("name at least one of --state, --kind, --queue", "jobs", "delete")
			refused("jobs delete takes no job id", "jobs", "delete", "1")
			refused("name at least one of --state, --kind, --queue", "jobs", "cancel", "--dry-run")
			refused("--tenant: empty, and alone it selects every job", "jobs", "cancel", "--tenant", "")
			refused("delete acts on completed, failed, cancelled jobs, not \"pending\"", "jobs", "delete", "--state", "pending")
			refused("--state: unknown state", "jobs", "retry", "--state", "bogus")
			refused("give a job id or a selection, not both", "jobs", "retry", "7", "--kind", "a")
			// By id as before: job 3 (kind b) is pending, not retried.
			refused("job 3: job is in the wrong state", "jobs", "retry", "3")
			refused("job 1: not found", "jobs", "retry", "1") // deleted
			r := runCLI(t, url, "jobs", "cancel", "3")
			if r.code != 0 || !strings.HasPrefix(r.stdout, "job 3 cancelled: cancelled") {
				t.Fatalf("cancel by id: %+v", r)
			}
		})
	}
}

// TestCLIJobsBulkPauseResume: jobs pause and resume act on a selection when
// given filters instead of an id, and refuse a state they do not act on.
func TestCLIJobsBulkPauseResume(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			jobs := writeJSONL(t, `{"kind":"a","queue":"q1"}`, `{"kind":"a","queue":"q1","delay_seconds":3600}`,
				`{"kind":"b","queue":"q1"}`, `{"kind":"a","queue":"q2"}`)
			if r := runCLI(t, url, "enqueue", "--jsonl", jobs); r.code != 0 {
				t.Fatalf("enqueue: %+v", r)
			}
			ok := func(want string, args ...string) {
				t.Helper()
				r := runCLI(t, url, args...)
				if r.code != 0 || !strings.HasPrefix(r.stdout, want) {
					t.Fatalf("%v: %+v, want %q", args, r, want)
				}
			}
			ok("would pause 2 jobs\n", "jobs", "pause", "--kind", "a", "--queue", "q1", "--dry-run")
			ok("paused 2 jobs of 2 matched in ", "jobs", "pause", "--kind", "a", "--queue", "q1")
			ok("paused 1 jobs of 1 matched in ", "jobs", "pause", "--state", "pending", "--queue", "q1")
			ok("resumed 1 jobs of 1 matched in ", "jobs", "resume", "--kind", "b")
			for id, want := range map[string]string{"1": "paused", "2": "paused", "3": "pending", "4": "pending"} {
				r := runCLI(t, url, "jobs", "show", id)
				if r.code != 0 || !strings.Contains(r.stdout, want) {
					t.Fatalf("job %s: %+v, want %s", id, r, want)
				}
			}
			ok("resumed 2 jobs of 2 matched in ", "jobs", "resume", "--queue", "q1,q2")
			r := runCLI(t, url, "jobs", "pause", "--state", "paused")
			if r.code != 2 || !strings.Contains(r.stderr, `pause acts on pending, scheduled, waiting, running jobs, not "paused"`) {
				t.Fatalf("pause --state paused: %+v", r)
			}
			r = runCLI(t, url, "jobs", "resume", "2", "--kind", "a")
			if r.code != 2 || !strings.Contains(r.stderr, "give a job id or a selection, not both") {
				t.Fatalf("resume ID with a filter: %+v", r)
			}
		})
	}
}
