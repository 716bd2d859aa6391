package skiplock

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"
)

// JobView is a job as the HTTP API and the CLI show it (docs/api.md): optional
// fields are null when unset, lists are never null.
type JobView struct {
	ID              int64           `json:"id"`
	Kind            string          `json:"kind"`
	Op              *string         `json:"op"`
	Queue           string          `json:"queue"`
	Tenant          string          `json:"tenant"`
	State           JobState        `json:"state"`
	Priority        int             `json:"priority"`
	Payload         json.RawMessage `json:"payload"`
	Metadata        json.RawMessage `json:"metadata"`
	Tags            []string        `json:"tags"`
	Attempt         int             `json:"attempt"`
	MaxRetries      int             `json:"max_retries"`
	RunAt           time.Time       `json:"run_at"`
	CreatedAt       time.Time       `json:"created_at"`
	StartedAt       *time.Time      `json:"started_at"`
	FinishedAt      *time.Time      `json:"finished_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
	LeaseUntil      *time.Time      `json:"lease_until"`
	WorkerID        *string         `json:"worker_id"`
	HeartbeatAt     *time.Time      `json:"heartbeat_at"`
	Progress        int             `json:"progress"`
	ProgressMessage string          `json:"progress_message"`
	Checkpoint      json.RawMessage `json:"checkpoint"`
	Result          json.RawMessage `json:"result"`
	Errors          []AttemptError  `json:"errors"`
	IdempotencyKey  *string         `json:"idempotency_key"`
	DependsOn       []int64         `json:"depends_on"`
	WorkflowID      *string         `json:"workflow_id"`
	Stage           *string         `json:"stage"`
	CancelRequested bool            `json:"cancel_requested"`
	// Traceparent is the W3C trace context the job carries in its
	// metadata (absent when none): a worker continues the trace from it.
	Traceparent string `json:"traceparent,omitempty"`
}

// NewJobView answers the API view of a job. Its times are in UTC and held
// within what JSON can write (ViewTime), so any stored job renders.
func NewJobView(j *JobRow) *JobView {
	v := JobViewOf(j)
	return &v
}

// JobViewOf is NewJobView as a value, for a caller that converts many
// jobs and keeps none of the views (the vault's export).
func JobViewOf(j *JobRow) JobView {
	return JobView{ID: j.ID, Kind: j.Kind, Op: optional(j.Op), Queue: j.Queue, Tenant: j.Tenant, State: j.State,
		Priority: j.Priority, Payload: orJSON(j.Payload, "{}"), Metadata: orJSON(j.Metadata, "{}"), Tags: orEmpty(j.Tags),
		Attempt: j.Attempt, MaxRetries: j.MaxRetries, RunAt: ViewTime(j.RunAt), CreatedAt: ViewTime(j.CreatedAt),
		StartedAt: viewTimePtr(j.StartedAt), FinishedAt: viewTimePtr(j.FinishedAt), UpdatedAt: ViewTime(j.UpdatedAt),
		LeaseUntil: viewTimePtr(j.LeaseUntil), WorkerID: optional(j.WorkerID), HeartbeatAt: viewTimePtr(j.HeartbeatAt),
		Progress: j.Progress, ProgressMessage: j.ProgressMessage,
		Checkpoint: orJSON(j.Checkpoint, "null"), Result: orJSON(j.Result, "null"), Errors: orEmpty(viewErrors(j.Errors)),
		IdempotencyKey: optional(j.IdempotencyKey), DependsOn: orEmpty(j.DependsOn), WorkflowID: optional(j.WorkflowID),
		Stage: optional(j.Stage), CancelRequested: j.CancelRequested, Traceparent: jobTraceparent(j)}
}

// orEmpty answers s, an empty list for nil (a row built by hand may have
// nil lists; the view's are never null).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// jobTraceparent answers the traceparent in a job's metadata, or "".
func jobTraceparent(j *JobRow) string {
	if !bytes.Contains(j.Metadata, []byte(`"traceparent"`)) {
		return ""
	}
	var tp string
	if ok, err := MetadataValue(j, "traceparent", &tp); !ok || err != nil {
		return ""
	}
	return tp
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func orJSON(b json.RawMessage, def string) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(def)
	}
	return b
}

// viewErrors answers errs with their times held renderable (ViewTime);
// errs belongs to the row and is copied before any change.
func viewErrors(errs []AttemptError) []AttemptError {
	for i := range errs {
		if !ViewTime(errs[i].At).Equal(errs[i].At) {
			out := slices.Clone(errs)
			for k := i; k < len(out); k++ {
				out[k].At = ViewTime(out[k].At)
			}
			return out
		}
	}
	return errs
}
