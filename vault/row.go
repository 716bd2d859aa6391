package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/skiplock/skiplock"
)

// jobRecord is one row of a jobs file: every field of skiplock.JobView and
// the two a restore needs that the view leaves out,
// JSON fields as JSON text, times as UTC timestamps in microseconds (the
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

// newJobRecord answers the row of j, as its API view shows it
// (skiplock.NewJobView), built from the row directly: export converts every
// job, and the view's copies cost more than the Parquet encoding.
func newJobRecord(j *skiplock.JobRow) (jobRecord, error) {
	errs := "[]" // most finished jobs have no errors: skip the encoder
	if len(j.Errors) > 0 {
		b, err := json.Marshal(viewErrors(j.Errors))
		if err != nil {
			return jobRecord{}, fmt.Errorf("job %d: errors: %w", j.ID, err)
		}
		errs = string(b)
	}
	return jobRecord{ID: j.ID, Kind: j.Kind, Op: optionalString(j.Op), Queue: j.Queue, Tenant: j.Tenant,
		State: string(j.State), Priority: int32(j.Priority), Payload: orJSON(j.Payload, "{}"),
		Metadata: orJSON(j.Metadata, "{}"), Tags: orEmpty(j.Tags), Attempt: int32(j.Attempt),
		MaxRetries: int32(j.MaxRetries), RunAt: viewMicro(j.RunAt), CreatedAt: viewMicro(j.CreatedAt),
		StartedAt: viewMicroPtr(j.StartedAt), FinishedAt: viewMicroPtr(j.FinishedAt), UpdatedAt: viewMicro(j.UpdatedAt),
		LeaseUntil: viewMicroPtr(j.LeaseUntil), WorkerID: optionalString(j.WorkerID),
		HeartbeatAt: viewMicroPtr(j.HeartbeatAt), Progress: int32(j.Progress), ProgressMessage: j.ProgressMessage,
		Checkpoint: jsonOrNull(j.Checkpoint), Result: jsonOrNull(j.Result), Errors: errs,
		IdempotencyKey: optionalString(j.IdempotencyKey), DependsOn: orEmpty(j.DependsOn),
		WorkflowID: optionalString(j.WorkflowID), Stage: optionalString(j.Stage), CancelRequested: j.CancelRequested,
		RunOnParentFailure: j.RunOnParentFailure, AttemptBase: int32(j.AttemptBase),
		Traceparent: optionalString(traceparent(j))}, nil
}

// viewErrors answers errs with their times as the view shows them; errs
// belongs to the row and is copied before any change.
func viewErrors(errs []skiplock.AttemptError) []skiplock.AttemptError {
	for i := range errs {
		if !skiplock.ViewTime(errs[i].At).Equal(errs[i].At) {
			out := slices.Clone(errs)
			for k := i; k < len(out); k++ {
				out[k].At = skiplock.ViewTime(out[k].At)
			}
			return out
		}
	}
	return errs
}

// traceparent answers the W3C trace context in j's metadata, or "".
func traceparent(j *skiplock.JobRow) string {
	if !bytes.Contains(j.Metadata, []byte(`"traceparent"`)) {
		return ""
	}
	var tp string
	if ok, err := skiplock.MetadataValue(j, "traceparent", &tp); !ok || err != nil {
		return ""
	}
	return tp
}

func orJSON(b json.RawMessage, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// orEmpty answers s, an empty list for nil (the view's lists are never null).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// viewMicro is the view's time (skiplock.ViewTime) to the microsecond.
func viewMicro(t time.Time) time.Time { return micro(skiplock.ViewTime(t)) }

func viewMicroPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	m := viewMicro(*t)
	return &m
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
