package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestCLIJanitor: `janitor run --dry-run` prints what would go and deletes
// nothing; the floor refuses a real run (exit 1, the reason on stderr)
// until --force; `janitor status` shows every run; bad retention flags
// and keys exit 2 naming them.
func TestCLIJanitor(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			var ids []string
			for range 3 {
				r := runCLI(t, url, "enqueue", "email", `{}`, "--json")
				var out struct{ Job struct{ ID int64 } }
				if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
					t.Fatalf("enqueue: %+v", r)
				}
				id := strconv.FormatInt(out.Job.ID, 10)
				if r := runCLI(t, url, "jobs", "cancel", id); r.code != 0 {
					t.Fatalf("cancel: %+v", r)
				}
				ids = append(ids, id)
			}
			dry := runCLI(t, url, "janitor", "run", "--dry-run", "--keep-cancelled", "1ms", "--force", "--json")
			var rep struct {
				Run struct {
					Jobs   int64 `json:"jobs"`
					DryRun bool  `json:"dry_run"`
				} `json:"run"`
				Groups []struct {
					State, Queue string
					Jobs         int64
				} `json:"groups"`
			}
			if err := json.Unmarshal([]byte(dry.stdout), &rep); err != nil || dry.code != 0 || rep.Run.Jobs != 3 ||
				!rep.Run.DryRun || len(rep.Groups) != 1 || rep.Groups[0].State != "cancelled" {
				t.Fatalf("dry run: %+v (%v)", dry, err)
			}
			if r := runCLI(t, url, "jobs", "show", ids[0]); r.code != 0 {
				t.Fatalf("after the dry run, job %s: %+v", ids[0], r)
			}
			refused := runCLI(t, url, "janitor", "run", "--keep-cancelled", "1ms")
			if refused.code != 1 || !strings.Contains(refused.stderr, "within the floor") ||
				!strings.Contains(refused.stdout, "would delete 3") {
				t.Fatalf("inside the floor: %+v", refused)
			}
			forced := runCLI(t, url, "janitor", "run", "--keep-cancelled", "1ms", "--force")
			if forced.code != 0 || !strings.Contains(forced.stdout, "deleted 3 of 3 archived jobs") {
				t.Fatalf("forced: %+v", forced)
			}
			if r := runCLI(t, url, "jobs", "show", ids[0]); r.code != 2 {
				t.Fatalf("after the run, job %s: %+v", ids[0], r)
			}
			st := runCLI(t, url, "janitor", "status")
			if st.code != 0 || strings.Count(st.stdout, "\n") != 4 || !strings.Contains(st.stdout, "refused") ||
				!strings.Contains(st.stdout, "dry run") {
				t.Fatalf("status: %+v", st)
			}
			for _, bad := range [][]string{{"--keep-failed", "soon"}, {"--keep-completed", "-1h"}} {
				r := runCLI(t, url, append([]string{"janitor", "run"}, bad...)...)
				if r.code != 2 || !strings.Contains(r.stderr, bad[0]) {
					t.Fatalf("%v: %+v", bad, r)
				}
			}
			if r := runCLI(t, url, "janitor", "status", "--limit", "0"); r.code != 2 || !strings.Contains(r.stderr, "--limit") {
				t.Fatalf("status --limit 0: %+v", r)
			}
		})
	}
}
