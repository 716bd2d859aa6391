package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/dbopen"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestCLIJobsFilterPayloadAndErrors: jobs list and the bulk commands pick
// by --payload (a.b nested), --error-type, --error-message and (bulk) --id
// and --metadata; a bad one exits 2 naming its flag or field.
func TestCLIJobsFilterPayloadAndErrors(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			ctx := context.Background()
			db, err := dbopen.OpenExisting(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			c, err := skiplock.NewClient(db.Driver, &skiplock.Config{})
			if err != nil {
				t.Fatal(err)
			}
			// Jobs 1 and 2 fail for good, 3 and 4 stay pending.
			for i, p := range []string{`{"customer_id":42,"order":{"id":"A-1"}}`, `{"customer_id":"42"}`,
				`{"customer_id":42,"order":{"id":"A-3"}}`, `{"customer_id":7}`} {
				q := "bill"
				if i >= 2 {
					q = "later"
				}
				if _, err := c.Insert(ctx, skiplock.RawArgs{KindName: "bill", Payload: json.RawMessage(p)},
					&skiplock.InsertOpts{Queue: q, Metadata: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i+1))}); err != nil {
					t.Fatal(err)
				}
			}
			jobs, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "bill", WorkerID: "w", Max: 2})
			if err != nil || len(jobs) != 2 {
				t.Fatalf("claim: %d jobs, %v", len(jobs), err)
			}
			for i, j := range jobs {
				if _, err := c.Fail(ctx, j.ID, skiplock.FailParams{WorkerID: "w", ErrorType: []string{"timeout", "declined"}[i],
					Message: []string{"Gateway TIMED OUT", "card declined"}[i]}); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
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
			for _, c := range []struct {
				want string
				args []string
			}{
				{"[{3} {1}]", []string{"--payload", "customer_id:42"}},
				{"[{2}]", []string{"--payload", `customer_id:"42"`}},
				{"[{3}]", []string{"--payload", "order.id:A-3"}},
				{"[{1}]", []string{"--error-type", "timeout"}},
				{"[{1}]", []string{"--error-message", "timed out"}},
				{"[]", []string{"--error-message", "timed out", "--error-type", "declined"}},
			} {
				if got := list(c.args...); got != c.want {
					t.Errorf("jobs list %v: %s, want %s", c.args, got, c.want)
				}
			}
			ok := func(want string, args ...string) {
				t.Helper()
				if r := runCLI(t, url, args...); r.code != 0 || !strings.HasPrefix(r.stdout, want) {
					t.Errorf("%v: %+v, want %q", args, r, want)
				}
			}
			ok("would retry 1 jobs\n", "jobs", "retry", "--error-message", "DECLINED", "--dry-run")
			ok("would retry 2 jobs\n", "jobs", "retry", "--id", "1", "--id", "2", "--dry-run")
			ok("would retry 1 jobs\n", "jobs", "retry", "--metadata", "n:1", "--id", "1,2", "--dry-run")
			ok("would retry 0 jobs\n", "jobs", "retry", "--metadata", "n:1", "--error-type", "declined", "--dry-run")
			ok("would cancel 1 jobs\n", "jobs", "cancel", "--payload", "customer_id:42", "--dry-run")
			ok("cancelled 2 jobs of 2 matched", "jobs", "cancel", "--id", "3,4")
			ok("retried 1 jobs of 1 matched", "jobs", "retry", "--error-type", "timeout")
			ok("would delete 1 jobs\n", "jobs", "delete", "--payload", "customer_id:7", "--dry-run")
			for _, c := range []struct {
				want string
				args []string
			}{
				{"--payload", []string{"jobs", "list", "--payload", "nocolon"}},
				{"payload", []string{"jobs", "list", "--payload", "a..b:1"}},
				{"error_message", []string{"jobs", "list", "--error-message", "a\xff"}},
				{"--id", []string{"jobs", "cancel", "--id", "0"}},
				{"--id", []string{"jobs", "cancel", "--id", "x"}},
				{"--payload", []string{"jobs", "retry", "--payload", "nocolon"}},
				{"--metadata", []string{"jobs", "delete", "--metadata", ":1"}},
				{"give a job id or a selection, not both", []string{"jobs", "retry", "1", "--error-type", "x"}},
			} {
				r := runCLI(t, url, c.args...)
				if r.code != 2 || !strings.Contains(r.stderr, c.want) {
					t.Errorf("%v: %+v, want exit 2 naming %s", c.args, r, c.want)
				}
			}
		})
	}
}

// TestCLIFilterIndexesPayload: migrate filter-indexes --payload adds the
// archive's payload index with the others, and --drop removes it.
func TestCLIFilterIndexesPayload(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	if r := runCLI(t, url, "migrate", "up"); r.code != 0 {
		t.Fatalf("migrate: %+v", r)
	}
	conn := pgtest.Conn(t, url)
	valid := func() bool {
		t.Helper()
		var ok bool
		if err := conn.QueryRow(context.Background(), `SELECT coalesce((SELECT indisvalid FROM pg_index
			WHERE indexrelid = to_regclass('skiplock_jobs_archive_payload')), false)`).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if r := runCLI(t, url, "migrate", "filter-indexes"); r.code != 0 || valid() {
		t.Fatalf("filter-indexes without --payload: %+v, payload index %v", r, valid())
	}
	if r := runCLI(t, url, "migrate", "filter-indexes", "--payload"); r.code != 0 ||
		!strings.HasPrefix(r.stdout, "filter-indexes: valid") || !valid() {
		t.Fatalf("filter-indexes --payload: %+v, payload index %v", r, valid())
	}
	if r := runCLI(t, url, "migrate", "filter-indexes", "--drop"); r.code != 0 || valid() {
		t.Fatalf("filter-indexes --drop: %+v, payload index %v", r, valid())
	}
}
