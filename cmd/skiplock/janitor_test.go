package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
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

// TestPrintReportFolds: a month partition dropped is named by its month,
// and each fold has its line: would be folded in a dry run, folded into
// the month partition in a run.
func TestPrintReportFolds(t *testing.T) {
	month := time.Date(2026, time.July, 1, 0, 0, 0, 0, time.UTC)
	rep := &skiplock.JanitorReport{
		Partitions: []driver.ArchivePartition{{Name: "skiplock_jobs_archive_202606", Day: month.AddDate(0, -1, 0), End: month, Bytes: 2000}},
		Folds:      []skiplock.ArchiveFold{{Name: "skiplock_jobs_archive_202607", Month: month, Days: 31, Jobs: 1200, Bytes: 3_100_000, Locked: 42 * time.Millisecond}},
	}
	for dry, want := range map[bool][]string{
		true:  {"partition skiplock_jobs_archive_202606 (2026-06, 2.0 kB): would be dropped", "month 2026-07: 31 day partitions (1,200 jobs, 3.1 MB): would be folded into one"},
		false: {"partition skiplock_jobs_archive_202606 (2026-06, 2.0 kB): dropped", "month 2026-07: 31 day partitions (1,200 jobs, 3.1 MB): folded into skiplock_jobs_archive_202607 (archive locked 42ms)"},
	} {
		rep.Run.DryRun = dry
		var b strings.Builder
		if err := printReport(&b, rep); err != nil {
			t.Fatal(err)
		}
		for _, line := range want {
			if !strings.Contains(b.String(), line+"\n") {
				t.Errorf("dry run %v: %q lacks %q", dry, b.String(), line)
			}
		}
	}
	if v := janitorReportView(rep); len(v.Folds) != 1 || v.Folds[0].Month != "2026-07" || v.Folds[0].LockHeldMS != 42 {
		t.Errorf("json folds %+v", v.Folds)
	}
}
