package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// topJobs puts jobs in several states in the database at url: in queue mail
// one running (40%, worker w-1), one failed for good, two pending and one
// scheduled; in queue reports one pending.
func topJobs(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	db, err := dbopen.OpenExisting(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := skiplock.NewClient(db.Driver, &skiplock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	insert := func(kind, queue string, opts *skiplock.InsertOpts) {
		t.Helper()
		if opts == nil {
			opts = &skiplock.InsertOpts{}
		}
		opts.Queue = queue
		if _, err := c.Insert(ctx, skiplock.RawArgs{KindName: kind, Payload: json.RawMessage(`{}`)}, opts); err != nil {
			t.Fatal(err)
		}
	}
	claimOne := func() *skiplock.JobRow {
		t.Helper()
		jobs, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "mail", WorkerID: "w-1", Max: 1})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v %v", jobs, err)
		}
		return jobs[0]
	}
	insert("email", "mail", nil)
	run := claimOne()
	progress, message := 40, "sending"
	if _, err := c.Heartbeat(ctx, run.ID, skiplock.HeartbeatParams{WorkerID: "w-1", Progress: &progress, ProgressMessage: &message}); err != nil {
		t.Fatal(err)
	}
	insert("bounce", "mail", &skiplock.InsertOpts{MaxRetries: skiplock.Int(0)})
	fail := claimOne()
	if _, err := c.Fail(ctx, fail.ID, skiplock.FailParams{WorkerID: "w-1", ErrorType: "SMTPError", Message: "mailbox full"}); err != nil {
		t.Fatal(err)
	}
	insert("email", "mail", nil)
	insert("email", "mail", nil)
	insert("email", "mail", &skiplock.InsertOpts{Delay: time.Hour})
	insert("report", "reports", nil)
}

// topRow answers the fields of the line of out that starts with first.
func topRow(out, first string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return f
		}
	}
	return nil
}

// `top --once` shows each queue with its counts, the running job and the
// failure; piped, `top` prints the same one snapshot and exits.
func TestCLITopOnce(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			topJobs(t, url)
			for _, args := range [][]string{{"top", "--once"}, {"top"}} {
				r := runCLI(t, url, args...)
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("%v: %+v", args, r)
				}
				if strings.Contains(r.stdout, "\x1b[") {
					t.Errorf("%v: terminal sequences in a snapshot:\n%q", args, r.stdout)
				}
				want := map[string]string{"mail": "mail no 2 1 1 1", "reports": "reports no 1 0 0 0"}
				for q, w := range want {
					row := topRow(r.stdout, q)
					if len(row) < 7 || strings.Join(row[:6], " ") != w {
						t.Errorf("%v: queue %s row %q, want it to start %q:\n%s", args, q, row, w, r.stdout)
					}
				}
				if !strings.Contains(r.stdout, "1 job running on 1 worker\n") {
					t.Errorf("%v: summary:\n%s", args, r.stdout)
				}
				if !strings.Contains(r.stdout, "last minute: 0 completed (0.00/s), 1 failed (0.02/s)") {
					t.Errorf("%v: rates:\n%s", args, r.stdout)
				}
				running := strings.Join(topRow(r.stdout, "1"), " ")
				if !strings.HasPrefix(running, "1 email mail w-1 40% sending") {
					t.Errorf("%v: running job row %q:\n%s", args, running, r.stdout)
				}
				failed := strings.Join(topRow(r.stdout, "2"), " ")
				if !strings.HasPrefix(failed, "2 bounce mail") || !strings.HasSuffix(failed, "SMTPError: mailbox full") {
					t.Errorf("%v: failure row %q:\n%s", args, failed, r.stdout)
				}
			}
		})
	}
}

// On a database without jobs, top says so; bad flags exit 2 with one line.
func TestCLITopEmptyAndBadFlags(t *testing.T) {
	t.Parallel()
	url := migrated(t, cliDatabases(t)["sqlite"])
	r := runCLI(t, url, "top", "--once")
	if r.code != 0 || !strings.Contains(r.stdout, "no queues and no jobs yet") || strings.Contains(r.stdout, "QUEUE") {
		t.Fatalf("empty database: %+v", r)
	}
	for _, args := range [][]string{{"top", "--interval", "0"}, {"top", "--interval", "soon"}, {"top", "--running", "-1"},
		{"top", "--failures", "1001"}, {"top", "--bogus"}, {"top", "extra"}} {
		r := runCLI(t, url, args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("%v: want exit 2 with one line on stderr, got %+v", args, r)
		}
	}
}
