package skiplock_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// TestSchedulePayloadMustBeObject: a schedule's payload is checked once, in
// the library, as an enqueued job's is: one the scheduler could not enqueue
// is refused naming payload and nothing is stored; none is {}.
func TestSchedulePayloadMustBeObject(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c, err := skiplock.NewClient(b.drv, &skiplock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{`[1]`, `"x"`, `42`, `{"a":`, `{"a":"\ud800"}`} {
			_, err := c.ScheduleUpsert(b.ctx, &skiplock.Schedule{Key: "k", Kind: "x", Every: time.Minute, Payload: json.RawMessage(bad)})
			var ve *skiplock.ValidationError
			if !errors.As(err, &ve) || (ve.Field != "payload" && ve.Field != "payload.a") {
				t.Errorf("payload %s: %v; want a ValidationError naming payload", bad, err)
			}
		}
		if list, err := c.ScheduleList(b.ctx, nil); err != nil || len(list) != 0 {
			t.Fatalf("refused schedules stored: %+v, %v", list, err)
		}
		for key, payload := range map[string]string{"none": ``, "null": `null`, "object": ` {"site": "acme"} `} {
			s, err := c.ScheduleUpsert(b.ctx, &skiplock.Schedule{Key: key, Kind: "x", Every: time.Minute, Payload: json.RawMessage(payload)})
			if err != nil {
				t.Fatalf("payload %q: %v", payload, err)
			}
			want := map[string]any{}
			if key == "object" {
				want["site"] = "acme"
			}
			var got map[string]any
			if err := json.Unmarshal(s.Payload, &got); err != nil || len(got) != len(want) || got["site"] != want["site"] {
				t.Errorf("payload %q stored as %s, want %v", payload, s.Payload, want)
			}
		}
	})
}
