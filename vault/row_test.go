package vault

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// TestJobRecordIsTheView: a row holds what the API view shows of a job,
// for bare rows, full rows, errors with zoned and out-of-range times, and
// a traceparent in the metadata; read back, it is the job again.
func TestJobRecordIsTheView(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234567, paris)
	later := at.Add(90 * time.Second)
	ancient := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := map[string]*skiplock.JobRow{
		"bare": {ID: 1, Kind: "k", Queue: "q", State: skiplock.StateCompleted, RunAt: at, CreatedAt: at,
			UpdatedAt: at, FinishedAt: &later},
		"full": {ID: 2, Kind: "k", Op: "op", Queue: "q", Tenant: "acme", State: skiplock.StateFailed, Priority: 3,
			Payload: json.RawMessage(`{"a":1}`), Metadata: json.RawMessage(`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","x":2}`),
			Tags: []string{"a", "b"}, Attempt: 4, MaxRetries: 5, AttemptBase: 2, RunAt: at, CreatedAt: at,
			StartedAt: &at, FinishedAt: &later, UpdatedAt: later, LeaseUntil: &later, WorkerID: "w1", HeartbeatAt: &at,
			Progress: 40, ProgressMessage: "half", Checkpoint: json.RawMessage(`{"c":1}`), Result: json.RawMessage(`[1]`),
			Errors: []skiplock.AttemptError{{Attempt: 1, Type: "boom", Message: "m", At: at},
				{Attempt: 2, Type: "old", Message: "n", At: ancient}},
			IdempotencyKey: "key", DependsOn: []int64{7, 8}, WorkflowID: "wf", Stage: "s2", CancelRequested: true,
			RunOnParentFailure: true},
		"null documents": {ID: 3, Kind: "k", Queue: "q", State: skiplock.StateCancelled, RunAt: ancient,
			CreatedAt: at, UpdatedAt: at, FinishedAt: &at, Checkpoint: json.RawMessage(`null`),
			Result: json.RawMessage(`null`), Errors: []skiplock.AttemptError{{Attempt: 1, At: at.UTC()}},
			Metadata: json.RawMessage(`{"traceparent":7}`)},
	}
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	checks := map[string]func(t *testing.T, r jobRecord){
		"bare": func(t *testing.T, r jobRecord) {
			if r.Op != nil || r.WorkerID != nil || r.StartedAt != nil || r.Checkpoint != nil || r.Traceparent != nil ||
				r.Payload != "{}" || r.Metadata != "{}" || r.Errors != "[]" || r.Tags == nil || r.DependsOn == nil {
				t.Errorf("unset fields: %+v", r)
			}
		},
		"full": func(t *testing.T, r jobRecord) {
			if r.Traceparent == nil || *r.Traceparent != tp || r.Op == nil || *r.Op != "op" || *r.Checkpoint != `{"c":1}` {
				t.Errorf("set fields: %+v", r)
			}
			if !strings.Contains(r.Errors, `"type":"boom"`) || !strings.Contains(r.Errors, `"at":"0001-01-01T00:00:00Z"`) {
				t.Errorf("errors %s: want both, the second at the first time JSON writes", r.Errors)
			}
			if !r.RunAt.Equal(at.Truncate(time.Microsecond)) || r.RunAt.Location() != time.UTC {
				t.Errorf("run_at %v: want %v in UTC to the microsecond", r.RunAt, at)
			}
		},
		"null documents": func(t *testing.T, r jobRecord) {
			if r.Checkpoint != nil || r.Result != nil || r.Traceparent != nil {
				t.Errorf("null documents and a traceparent that is no string: %+v", r)
			}
		},
	}
	for name, j := range rows {
		t.Run(name, func(t *testing.T) {
			r, err := newJobRecord(j)
			if err != nil {
				t.Fatal(err)
			}
			checks[name](t, r)
			back, err := r.job()
			if err != nil {
				t.Fatal(err)
			}
			want := atMicros(j) // error times in UTC
			want.FillEmpty()
			if len(want.Payload) == 0 {
				want.Payload = json.RawMessage("{}")
			}
			if len(want.Metadata) == 0 {
				want.Metadata = json.RawMessage("{}")
			}
			if string(j.Checkpoint) == "null" {
				want.Checkpoint, want.Result = nil, nil
			}
			for i := range back.Errors {
				back.Errors[i].At = back.Errors[i].At.UTC()
			}
			if !reflect.DeepEqual(back, want) {
				t.Fatalf("read back\n got %+v\nwant %+v", back, want)
			}
		})
	}
}
