package server_test

import "testing"

// TestSchedulePayloadRefused: PUT /v1/schedules/{key} answers the library's
// check of the payload (a JSON object, as a job's): 400 naming payload,
// nothing stored.
func TestSchedulePayloadRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		for _, payload := range []string{`[1]`, `"x"`, `7`} {
			a := b.do(t, "PUT", "/v1/schedules/k", "", `{"kind":"x","every_seconds":60,"payload":`+payload+`}`)
			if code, field := a.errCode(); a.status != 400 || code != "invalid_argument" || field != "payload" {
				t.Errorf("payload %s: %d %s; want 400 naming payload", payload, a.status, a.raw)
			}
		}
		if s := must(t, b.do(t, "GET", "/v1/schedules", "", nil), 200).body["schedules"]; len(s.([]any)) != 0 {
			t.Errorf("schedules stored by refused requests: %v", s)
		}
		must(t, b.do(t, "PUT", "/v1/schedules/k", "", `{"kind":"x","every_seconds":60}`), 200)
	})
}
