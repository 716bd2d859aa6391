package vault

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// viewRecord is the row of j made the long way, through its API view:
// what newJobRecord must answer without the view.
func viewRecord(t *testing.T, j *skiplock.JobRow) jobRecord {
	t.Helper()
	v := skiplock.NewJobView(j)
	errs, err := json.Marshal(v.Errors)
	if err != nil {
		t.Fatal(err)
	}
	return jobRecord{ID: v.ID, Kind: v.Kind, Op: v.Op, Queue: v.Queue, Tenant: v.Tenant, State: string(v.State),
		Priority: int32(v.Priority), Payload: string(v.Payload), Metadata: string(v.Metadata), Tags: v.Tags,
		Attempt: int32(v.Attempt), MaxRetries: int32(v.MaxRetries), RunAt: micro(v.RunAt), CreatedAt: micro(v.CreatedAt),
		StartedAt: microPtr(v.StartedAt), FinishedAt: microPtr(v.FinishedAt), UpdatedAt: micro(v.UpdatedAt),
		LeaseUntil: microPtr(v.LeaseUntil), WorkerID: v.WorkerID, HeartbeatAt: microPtr(v.HeartbeatAt),
		Progress: int32(v.Progress), ProgressMessage: v.ProgressMessage, Checkpoint: jsonOrNull(v.Checkpoint),
		Result: jsonOrNull(v.Result), Errors: string(errs), IdempotencyKey: v.IdempotencyKey,
		DependsOn: v.DependsOn, WorkflowID: v.WorkflowID, Stage: v.Stage, CancelRequested: v.CancelRequested,
		RunOnParentFailure: j.RunOnParentFailure, AttemptBase: int32(j.AttemptBase),
		Traceparent: optionalString(v.Traceparent)}
}

// TestJobRecordIsTheView: a row holds what the API view shows of a job,
// for bare rows, full rows, errors with zoned and out-of-range times,
// and a traceparent in the metadata.
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
	for name, j := range rows {
		t.Run(name, func(t *testing.T) {
			got, err := newJobRecord(j)
			if err != nil {
				t.Fatal(err)
			}
			if want := viewRecord(t, j); !reflect.DeepEqual(got, want) {
				t.Fatalf("row\n got %+v\nwant %+v", got, want)
			}
		})
	}
}
