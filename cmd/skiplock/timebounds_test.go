package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestCLITimeBounds: a time outside 1970–9999 in UTC exits 2 naming it and
// stores nothing; a job or schedule written into the database by other
// means with a time JSON cannot write still lists as JSON.
func TestCLITimeBounds(t *testing.T) {
	t.Parallel()
	raw := map[string][]string{
		"postgres": {`UPDATE skiplock_jobs SET run_at = '200000-01-01 00:00:00+00', lease_until = '10000-01-01 00:00:00+00'`,
			`UPDATE skiplock_schedules SET next_run_at = '200000-01-01 00:00:00+00'`},
		"sqlite": {`UPDATE skiplock_jobs SET run_at = 9000000000000000000, lease_until = -9000000000000000000`,
			`UPDATE skiplock_schedules SET next_run_at = 9000000000000000000`},
	}
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			bad := map[string][]string{
				"run_at":        {"enqueue", "k", "--run-at", "9999-12-31T23:59:59-01:00"},
				"run_at ":       {"enqueue", "k", "--run-at", "1969-12-31T23:59:59Z"},
				"next_run_at":   {"schedules", "add", "s", "--kind", "k", "--every", "1m", "--next-run-at", "9999-12-31T23:59:59-01:00"},
				"ID":            {"jobs", "show", "+1"},
				"--run-at":      {"enqueue", "k", "--run-at", "0001-01-01T00:00:00Z"},
				"--next-run-at": {"schedules", "add", "s", "--kind", "k", "--every", "1m", "--next-run-at", "0001-01-01T00:00:00Z"},
			}
			for want, args := range bad {
				r := runCLI(t, url, args...)
				if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, strings.TrimSpace(want)) {
					t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s", args, r.code, r.stderr, want)
				}
			}
			if r := runCLI(t, url, "jobs", "list", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"jobs": []`) {
				t.Errorf("refused enqueues stored jobs: %+v", r)
			}
			if r := runCLI(t, url, "enqueue", "k", "--run-at", "9999-12-31T23:59:59Z"); r.code != 0 {
				t.Fatalf("enqueue at the last second: %+v", r)
			}
			if r := runCLI(t, url, "schedules", "add", "s", "--kind", "k", "--every", "1m"); r.code != 0 {
				t.Fatalf("schedules add: %+v", r)
			}
			rawExecURL(t, name, url, raw[name])
			for _, args := range [][]string{{"jobs", "list", "--json"}, {"jobs", "show", "1", "--json"}, {"schedules", "list", "--json"}} {
				r := runCLI(t, url, args...)
				if r.code != 0 || !json.Valid([]byte(r.stdout)) {
					t.Errorf("%v with a far time stored: %+v", args, r)
				}
			}
			if r := runCLI(t, url, "jobs", "list", "--json"); !strings.Contains(r.stdout, "9999-12-31T23:59:59.999999999Z") {
				t.Errorf("run_at of year 200000 lists as %s", r.stdout)
			}
		})
	}
}

// rawExecURL runs statements on the database at url directly, as another
// program writing into it would.
func rawExecURL(t *testing.T, name, url string, stmts []string) {
	t.Helper()
	ctx := context.Background()
	if name == "sqlite" {
		db := sqlitetest.Open(t, url).DB()
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				t.Fatalf("raw SQL: %v", err)
			}
		}
		return
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("raw SQL: %v", err)
		}
	}
}
