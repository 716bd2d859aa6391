package server_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestStoredInfinitiesRender: rows written into the database by other means
// with times no Go time holds (PostgreSQL's 'infinity' and '-infinity',
// SQLite's extreme, real and text values) and error lists that do not
// decode still render in every view, and the jobs can still be cancelled.
func TestStoredInfinitiesRender(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		post := func(body string) int64 {
			return id(must(t, b.do(t, "POST", "/v1/jobs", "", body), 201).job())
		}
		up, down, bad := post(`{"kind":"x","workflow_id":"wf"}`), post(`{"kind":"x","workflow_id":"wf"}`), post(`{"kind":"x"}`)
		done := post(`{"kind":"done","workflow_id":"wf"}`)
		must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w","kinds":["done"]}`), 200)
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", done), "", `{"worker_id":"w"}`), 200)
		must(t, b.do(t, "PUT", "/v1/schedules/k", "", `{"kind":"x","every_seconds":60}`), 200)
		entries := `[{"at":"+123456-01-01T00:00:00Z","message":1,"attempt":2},{"attempt":"two","message":"m"},"x",null]`
		pg := []string{
			fmt.Sprintf(`UPDATE skiplock_jobs SET run_at = 'infinity', created_at = '-infinity', started_at = 'infinity',
				finished_at = '-infinity', updated_at = 'infinity', lease_until = 'infinity', heartbeat_at = '-infinity'
				WHERE id = %d`, up),
			fmt.Sprintf(`UPDATE skiplock_jobs SET run_at = '-infinity', created_at = 'infinity', started_at = '-infinity',
				finished_at = 'infinity', updated_at = '-infinity', lease_until = '-infinity', heartbeat_at = 'infinity',
				errors = '{}' WHERE id = %d`, down),
			fmt.Sprintf(`UPDATE skiplock_jobs SET errors = '%s' WHERE id = %d`, entries, bad),
			fmt.Sprintf(`UPDATE skiplock_jobs_archive SET run_at = '-infinity', created_at = 'infinity', started_at = 'infinity',
				finished_at = 'infinity', updated_at = '-infinity', lease_until = '-infinity', heartbeat_at = 'infinity',
				errors = '[1,2]' WHERE id = %d`, done),
			`UPDATE skiplock_schedules SET next_run_at = 'infinity', created_at = '-infinity', updated_at = 'infinity',
				every_seconds = 'Infinity'`,
		}
		lite := []string{
			fmt.Sprintf(`UPDATE skiplock_jobs SET run_at = 9223372036854775807, created_at = -9223372036854775808,
				started_at = 1e300, finished_at = -1e300, updated_at = 'infinity', lease_until = 'soon',
				heartbeat_at = '-infinity' WHERE id = %d`, up),
			fmt.Sprintf(`UPDATE skiplock_jobs SET run_at = -9223372036854775808, created_at = 9223372036854775807,
				started_at = -9223372036854775808, updated_at = -9223372036854775808, lease_until = 1.5,
				errors = '{}' WHERE id = %d`, down),
			fmt.Sprintf(`UPDATE skiplock_jobs SET errors = '%s' WHERE id = %d`, entries, bad),
			fmt.Sprintf(`UPDATE skiplock_jobs_archive SET run_at = -9223372036854775808, created_at = 'infinity',
				finished_at = 9223372036854775807, updated_at = 'x', errors = 'not json' WHERE id = %d`, done),
			`UPDATE skiplock_schedules SET next_run_at = 'infinity', created_at = -1e300, updated_at = 9223372036854775807`,
		}
		rawExec(t, b.drv, pg, lite)

		listed := map[int64]bool{}
		for cursor := ""; ; {
			a := must(t, b.do(t, "GET", "/v1/jobs?limit=1"+cursor, "", nil), 200)
			for _, j := range a.jobs() {
				listed[id(j)] = true
			}
			next, _ := a.body["next_cursor"].(string)
			if next == "" {
				break
			}
			cursor = "&cursor=" + next
		}
		if len(listed) != 4 {
			t.Errorf("listed jobs %v, want the 4 stored", listed)
		}
		got := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", up), "", nil), 200).job()
		if got["run_at"] != "9999-12-31T23:59:59.999999999Z" || got["created_at"] != "0000-01-01T00:00:00Z" {
			t.Errorf("job at +/- infinity: run_at %v, created_at %v; want the last and first instants JSON writes",
				got["run_at"], got["created_at"])
		}
		must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", down), "", nil), 200)
		must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", done), "", nil), 200)
		errs := maps(must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", bad), "", nil), 200).job()["errors"])
		if len(errs) != 4 || errs[0]["attempt"] != 2.0 || !strings.Contains(fmt.Sprint(errs[0]["message"]), "unreadable") ||
			!strings.Contains(fmt.Sprint(errs[1]["message"]), `"two"`) || !strings.Contains(fmt.Sprint(errs[2]["message"]), `"x"`) {
			t.Errorf("malformed error entries render as %v; want each kept, what reads kept, marked unreadable", errs)
		}
		must(t, b.do(t, "GET", "/v1/workflows/wf", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/stats", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/schedules", "", nil), 200)
		for _, q := range maps(must(t, b.do(t, "GET", "/v1/queues", "", nil), 200).body["queues"]) {
			age, ok := q["oldest_pending_age_seconds"].(float64)
			if !ok || age < 0 || math.IsInf(age, 0) || (q["name"] == "default" && age < 1e9) {
				t.Errorf("queue %v: oldest pending age %v; want a finite age past 30 years", q["name"], q["oldest_pending_age_seconds"])
			}
		}
		for _, j := range []int64{up, down, bad} {
			must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", j), "", nil), 200)
		}
		if a := b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", done), "", nil); a.status >= 500 || !json.Valid(a.raw) {
			t.Errorf("cancel of a finished job: %d %s", a.status, a.raw)
		}
		for cursor := ""; ; {
			a := must(t, b.do(t, "GET", "/v1/jobs?limit=2"+cursor, "", nil), 200)
			next, _ := a.body["next_cursor"].(string)
			if next == "" {
				break
			}
			cursor = "&cursor=" + next
		}
	})
}
