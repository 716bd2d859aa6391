package vault

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/skiplock/skiplock"
)

// jobRecord is one row of a jobs file: every field of skiplock.JobView and
// the two a restore needs that the view leaves out, JSON fields as JSON text, times as UTC timestamps in microseconds (the
// precision both databases keep), unset optional fields null.
type jobRecord struct {
	ID              int64      `parquet:"id,delta"`
	Kind            string     `parquet:"kind,dict"`
	Op              *string    `parquet:"op,optional,dict"`
	Queue           string     `parquet:"queue,dict"`
	Tenant          string     `parquet:"tenant,dict"`
	State           string     `parquet:"state,dict"`
	Priority        int32      `parquet:"priority"`
	Payload         string     `parquet:"payload"`
	Metadata        string     `parquet:"metadata"`
	Tags            []string   `parquet:"tags,list"`
	Attempt         int32      `parquet:"attempt"`
	MaxRetries      int32      `parquet:"max_retries"`
	RunAt           time.Time  `parquet:"run_at,timestamp(microsecond)"`
	CreatedAt       time.Time  `parquet:"created_at,timestamp(microsecond)"`
	StartedAt       *time.Time `parquet:"started_at,optional,timestamp(microsecond)"`
	FinishedAt      *time.Time `parquet:"finished_at,optional,timestamp(microsecond)"`
	UpdatedAt       time.Time  `parquet:"updated_at,timestamp(microsecond)"`
	LeaseUntil      *time.Time `parquet:"lease_until,optional,timestamp(microsecond)"`
	WorkerID        *string    `parquet:"worker_id,optional"`
	HeartbeatAt     *time.Time `parquet:"heartbeat_at,optional,timestamp(microsecond)"`
	Progress        int32      `parquet:"progress"`
	ProgressMessage string     `parquet:"progress_message"`
	Checkpoint      *string    `parquet:"checkpoint,optional"`
	Result          *string    `parquet:"result,optional"`
	Errors          string     `parquet:"errors"`
	IdempotencyKey  *string    `parquet:"idempotency_key,optional"`
	DependsOn       []int64    `parquet:"depends_on,list"`
	WorkflowID      *string    `parquet:"workflow_id,optional,dict"`
	Stage           *string    `parquet:"stage,optional,dict"`
	CancelRequested bool       `parquet:"cancel_requested"`
	// Traceparent is the W3C trace context the job carries in its metadata.
	Traceparent *string `parquet:"traceparent,optional"`
	// RunOnParentFailure and AttemptBase are what a restore needs beyond the
	// view; files written before they were kept read them as false and 0.
	RunOnParentFailure bool  `parquet:"run_on_parent_failure,optional"`
	AttemptBase        int32 `parquet:"attempt_base,optional"`
}

// newJobRecord answers the row of j: its API view (skiplock.JobViewOf),
// times to the microsecond, JSON null for unset documents.
func newJobRecord(j *skiplock.JobRow) (jobRecord, error) {
	v := skiplock.JobViewOf(j)
	errs := "[]" // most finished jobs have no errors: skip the encoder
	if len(v.Errors) > 0 {
		b, err := json.Marshal(v.Errors)
		if err != nil {
			return jobRecord{}, fmt.Errorf("job %d: errors: %w", j.ID, err)
		}
		errs = string(b)
	}
	for _, t := range []*time.Time{v.StartedAt, v.FinishedAt, v.LeaseUntil, v.HeartbeatAt} {
		if t != nil { // the view's own copy
			*t = micro(*t)
		}
	}
	return jobRecord{ID: v.ID, Kind: v.Kind, Op: v.Op, Queue: v.Queue, Tenant: v.Tenant, State: string(v.State),
		Priority: int32(v.Priority), Payload: string(v.Payload), Metadata: string(v.Metadata), Tags: v.Tags,
		Attempt: int32(v.Attempt), MaxRetries: int32(v.MaxRetries), RunAt: micro(v.RunAt), CreatedAt: micro(v.CreatedAt),
		StartedAt: v.StartedAt, FinishedAt: v.FinishedAt, UpdatedAt: micro(v.UpdatedAt),
		LeaseUntil: v.LeaseUntil, WorkerID: v.WorkerID, HeartbeatAt: v.HeartbeatAt,
		Progress: int32(v.Progress), ProgressMessage: v.ProgressMessage, Checkpoint: jsonOrNull(v.Checkpoint),
		Result: jsonOrNull(v.Result), Errors: errs, IdempotencyKey: v.IdempotencyKey,
		DependsOn: v.DependsOn, WorkflowID: v.WorkflowID, Stage: v.Stage, CancelRequested: v.CancelRequested,
		RunOnParentFailure: j.RunOnParentFailure, AttemptBase: int32(j.AttemptBase),
		Traceparent: optionalString(v.Traceparent)}, nil
}

// job answers the stored job the row was made from.
func (r *jobRecord) job() (*skiplock.JobRow, error) {
	j := &skiplock.JobRow{ID: r.ID, Kind: r.Kind, Op: deref(r.Op), Queue: r.Queue, Tenant: r.Tenant,
		State: skiplock.JobState(r.State), Priority: int(r.Priority), Payload: json.RawMessage(r.Payload),
		Metadata: json.RawMessage(r.Metadata), Tags: r.Tags, Attempt: int(r.Attempt), MaxRetries: int(r.MaxRetries),
		RunAt: r.RunAt.UTC(), CreatedAt: r.CreatedAt.UTC(), StartedAt: utcPtr(r.StartedAt),
		FinishedAt: utcPtr(r.FinishedAt), UpdatedAt: r.UpdatedAt.UTC(), LeaseUntil: utcPtr(r.LeaseUntil),
		WorkerID: deref(r.WorkerID), HeartbeatAt: utcPtr(r.HeartbeatAt), Progress: int(r.Progress),
		ProgressMessage: r.ProgressMessage, IdempotencyKey: deref(r.IdempotencyKey), DependsOn: r.DependsOn,
		WorkflowID: deref(r.WorkflowID), Stage: deref(r.Stage), CancelRequested: r.CancelRequested,
		RunOnParentFailure: r.RunOnParentFailure, AttemptBase: int(r.AttemptBase)}
	if r.Checkpoint != nil {
		j.Checkpoint = json.RawMessage(*r.Checkpoint)
	}
	if r.Result != nil {
		j.Result = json.RawMessage(*r.Result)
	}
	if err := json.Unmarshal([]byte(r.Errors), &j.Errors); err != nil {
		return nil, fmt.Errorf("job %d: errors: %w", r.ID, err)
	}
	j.FillEmpty()
	return j, nil
}

// micro drops what a microsecond timestamp cannot hold.
func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func microPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	m := micro(*t)
	return &m
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// jsonOrNull answers JSON text, nil for JSON null (the field unset).
func jsonOrNull(b json.RawMessage) *string {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	s := string(b)
	return &s
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
