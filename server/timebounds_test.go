package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
)

// TestTimeBounds: a time outside 1970–9999 in UTC answers 400 naming the
// field and stores nothing, in a single job, a batch and a schedule; the
// edges of the range are accepted and render.
func TestTimeBounds(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		refused := []struct{ method, path, body, field string }{
			{"POST", "/v1/jobs", `{"kind":"x","run_at":"9999-12-31T23:59:59-01:00"}`, "run_at"},
			{"POST", "/v1/jobs", `{"kind":"x","run_at":"10000-01-01T00:00:00Z"}`, "run_at"},
			{"POST", "/v1/jobs", `{"kind":"x","run_at":"1969-12-31T23:59:59Z"}`, "run_at"},
			{"POST", "/v1/jobs", `{"kind":"x","run_at":"1970-01-01T00:30:00+01:00"}`, "run_at"},
			{"POST", "/v1/jobs", `{"kind":"x","run_at":"0001-01-01T00:00:00Z"}`, "run_at"},
			{"POST", "/v1/jobs", `{"kind":"x","run_at":"2030-01-01T00:00:00Z","delay_seconds":5}`, "delay_seconds"},
			{"POST", "/v1/jobs/batch", `{"jobs":[{"kind":"x"},{"kind":"x","run_at":"9999-12-31T23:59:59-01:00"}]}`, "jobs[1].run_at"},
			{"PUT", "/v1/schedules/k", `{"kind":"x","every_seconds":60,"next_run_at":"9999-12-31T23:59:59-01:00"}`, "next_run_at"},
			{"PUT", "/v1/schedules/k", `{"kind":"x","every_seconds":60,"next_run_at":"1969-12-31T23:00:00Z"}`, "next_run_at"},
			{"PUT", "/v1/schedules/k", `{"kind":"x","every_seconds":60,"next_run_at":"0001-01-01T00:00:00Z"}`, "next_run_at"},
		}
		for _, c := range refused {
			a := b.do(t, c.method, c.path, "", c.body)
			if code, field := a.errCode(); a.status != 400 || code != "invalid_argument" || field != c.field {
				t.Errorf("%s %s %s: %d %s; want 400 naming %s", c.method, c.path, c.body, a.status, a.raw, c.field)
			}
		}
		if n := len(must(t, b.do(t, "GET", "/v1/jobs", "", nil), 200).jobs()); n != 0 {
			t.Errorf("%d jobs stored by refused requests", n)
		}
		if s := must(t, b.do(t, "GET", "/v1/schedules", "", nil), 200).body["schedules"]; len(s.([]any)) != 0 {
			t.Errorf("schedules stored by refused requests: %v", s)
		}
		for _, at := range []string{"1970-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "9999-12-31T22:59:59-01:00"} {
			j := must(t, b.do(t, "POST", "/v1/jobs", "", fmt.Sprintf(`{"kind":"edge","run_at":%q}`, at)), 201).job()
			must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", id(j)), "", nil), 200)
		}
		must(t, b.do(t, "PUT", "/v1/schedules/edge", "", `{"kind":"x","every_seconds":60,"next_run_at":"9999-12-31T23:59:59Z"}`), 200)
		must(t, b.do(t, "GET", "/v1/jobs", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/schedules", "", nil), 200)
	})
}

// TestStoredFarTimesRender: a row written into the database by other means,
// with times far outside what RFC 3339 writes, still renders in every view.
func TestStoredFarTimesRender(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		j := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"x","workflow_id":"wf","run_at":"2100-01-01T00:00:00Z"}`), 201).job()
		must(t, b.do(t, "PUT", "/v1/schedules/k", "", `{"kind":"x","every_seconds":60}`), 200)
		pg := []string{
			`UPDATE skiplock_jobs SET run_at = '200000-01-01 00:00:00+00', created_at = '4000-01-01 00:00:00+00 BC',
				updated_at = '294276-12-31 00:00:00+00', lease_until = '10000-01-01 00:00:00+00', heartbeat_at = '10000-06-01 00:00:00+00'`,
			`UPDATE skiplock_schedules SET next_run_at = '200000-01-01 00:00:00+00', created_at = '10000-01-01 00:00:00+00'`,
		}
		lite := []string{
			`UPDATE skiplock_jobs SET run_at = 9000000000000000000, created_at = -9000000000000000000,
				updated_at = 300000000000000000, lease_until = 253402300800000000, heartbeat_at = 253402300800000001`,
			`UPDATE skiplock_schedules SET next_run_at = 9000000000000000000, created_at = -9000000000000000000`,
		}
		rawExec(t, b.drv, pg, lite)
		path := fmt.Sprintf("/v1/jobs/%d", id(j))
		got := must(t, b.do(t, "GET", path, "", nil), 200).job()
		if got["run_at"] != "9999-12-31T23:59:59.999999999Z" {
			t.Errorf("run_at of year 200000 renders as %v, want the last instant of 9999", got["run_at"])
		}
		must(t, b.do(t, "GET", "/v1/jobs", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/jobs?state=scheduled", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/workflows/wf", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/queues", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/stats", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/schedules", "", nil), 200)
		must(t, b.do(t, "POST", path+"/cancel", "", nil), 200)
		must(t, b.do(t, "GET", path, "", nil), 200)
		must(t, b.do(t, "GET", "/v1/jobs", "", nil), 200)
	})
}

// rawExec runs statements on the test's database directly, as another
// program writing into it would.
func rawExec(t *testing.T, drv driver.Driver, pg, lite []string) {
	t.Helper()
	ctx := context.Background()
	for i := range pg {
		var err error
		switch d := drv.(type) {
		case *pgdriver.Driver:
			_, err = d.Pool().Exec(ctx, pg[i])
		case *sqlitedriver.Driver:
			_, err = d.DB().ExecContext(ctx, lite[i])
		default:
			t.Fatalf("no raw SQL for driver %T", drv)
		}
		if err != nil {
			t.Fatalf("raw SQL %d: %v", i, err)
		}
	}
}
