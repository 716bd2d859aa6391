package main

import (
	"encoding/json"
	"testing"
)

// TestCLIStoredInfinities: jobs, schedules, tokens and migrations written
// into the database by other means with times no Go time holds
// (PostgreSQL's infinities; SQLite's extreme, real and text values) and
// error lists that do not decode still list, as JSON and as text.
func TestCLIStoredInfinities(t *testing.T) {
	t.Parallel()
	raw := map[string][]string{
		"postgres": {`UPDATE skiplock_jobs SET run_at = '-infinity', created_at = 'infinity', lease_until = 'infinity',
				heartbeat_at = '-infinity', errors = '[{"message":1},2]'`,
			`UPDATE skiplock_schedules SET next_run_at = 'infinity', created_at = '-infinity'`,
			`UPDATE skiplock_tokens SET created_at = 'infinity'`,
			`UPDATE skiplock_migrations SET applied_at = '-infinity'`},
		"sqlite": {`UPDATE skiplock_jobs SET run_at = -9223372036854775808, created_at = 'infinity', lease_until = 1e300,
				heartbeat_at = 'x', errors = 'not json'`,
			`UPDATE skiplock_schedules SET next_run_at = 'infinity', created_at = -1e300`,
			`UPDATE skiplock_tokens SET created_at = '-infinity'`,
			`UPDATE skiplock_migrations SET applied_at = 'x'`},
	}
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := open(t)
			for _, args := range [][]string{{"migrate", "up"}, {"enqueue", "k", "--workflow-id", "wf"}, {"schedules", "add", "s", "--kind", "k", "--every", "1m"},
				{"token", "create", "--role", "admin", "--name", "t"}} {
				if r := runCLI(t, url, args...); r.code != 0 {
					t.Fatalf("%v: %+v", args, r)
				}
			}
			rawExecURL(t, name, url, raw[name])
			for _, args := range [][]string{{"jobs", "list", "--json"}, {"jobs", "show", "1", "--json"}, {"schedules", "list", "--json"},
				{"workflows", "show", "wf", "--json"}} {
				r := runCLI(t, url, args...)
				if r.code != 0 || !json.Valid([]byte(r.stdout)) {
					t.Errorf("%v with infinite times stored: %+v", args, r)
				}
			}
			for _, args := range [][]string{{"jobs", "list"}, {"schedules", "list"}, {"queues", "list"}, {"token", "list"}, {"migrate", "status"}} {
				if r := runCLI(t, url, args...); r.code != 0 {
					t.Errorf("%v with infinite times stored: %+v", args, r)
				}
			}
		})
	}
}
