package sqlitedriver

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// jobRow holds one row of {{cols}} as read, before it becomes a job.
type jobRow struct {
	j                                       driver.Job
	op, workerID, key, workflow, stage      sql.NullString
	state, payload, metadata, tags, errs    string
	deps                                    string
	checkpoint, result                      sql.NullString
	runAt, createdAt, updatedAt             storedMicros
	startedAt, finishedAt, lease, heartbeat storedMicros
}

// target answers the scan target of job column c (driver.JobColumns). A
// column without one panics when the package loads (init below).
func (r *jobRow) target(c string) any {
	j := &r.j
	switch c {
	case "id":
		return &j.ID
	case "kind":
		return &j.Kind
	case "op":
		return &r.op
	case "queue":
		return &j.Queue
	case "tenant":
		return &j.Tenant
	case "state":
		return &r.state
	case "priority":
		return &j.Priority
	case "payload":
		return &r.payload
	case "metadata":
		return &r.metadata
	case "tags":
		return &r.tags
	case "attempt":
		return &j.Attempt
	case "max_retries":
		return &j.MaxRetries
	case "attempt_base":
		return &j.AttemptBase
	case "run_at":
		return &r.runAt
	case "created_at":
		return &r.createdAt
	case "started_at":
		return &r.startedAt
	case "finished_at":
		return &r.finishedAt
	case "updated_at":
		return &r.updatedAt
	case "lease_until":
		return &r.lease
	case "worker_id":
		return &r.workerID
	case "heartbeat_at":
		return &r.heartbeat
	case "progress":
		return &j.Progress
	case "progress_message":
		return &j.ProgressMessage
	case "checkpoint":
		return &r.checkpoint
	case "result":
		return &r.result
	case "errors":
		return &r.errs
	case "idempotency_key":
		return &r.key
	case "depends_on":
		return &r.deps
	case "workflow_id":
		return &r.workflow
	case "stage":
		return &r.stage
	case "cancel_requested":
		return &j.CancelRequested
	case "run_on_parent_failure":
		return &j.RunOnParentFailure
	}
	panic("sqlitedriver: no scan target for job column " + c)
}

func init() { newJobScanner() }

// jobScanner reads rows of {{cols}} into its jobRow, whose targets it
// names once for every row.
type jobScanner struct {
	r    jobRow
	dest []any
}

func newJobScanner() *jobScanner {
	s := &jobScanner{dest: make([]any, len(driver.JobColumns))}
	for i, c := range driver.JobColumns {
		s.dest[i] = s.r.target(c)
	}
	return s
}

// scan reads row into a new job.
func (s *jobScanner) scan(row scanner) (*driver.Job, error) {
	s.r = jobRow{}
	if err := row.Scan(s.dest...); err != nil {
		return nil, err
	}
	r := &s.r
	j := new(driver.Job)
	*j = r.j
	j.State = driver.JobState(r.state)
	j.Op, j.WorkerID, j.IdempotencyKey = r.op.String, r.workerID.String, r.key.String
	j.WorkflowID, j.Stage = r.workflow.String, r.stage.String
	j.Payload, j.Metadata = json.RawMessage(r.payload), json.RawMessage(r.metadata)
	if r.checkpoint.Valid {
		j.Checkpoint = json.RawMessage(r.checkpoint.String)
	}
	if r.result.Valid {
		j.Result = json.RawMessage(r.result.String)
	}
	j.RunAt, j.CreatedAt, j.UpdatedAt = r.runAt.time(), r.createdAt.time(), r.updatedAt.time()
	j.StartedAt, j.FinishedAt = r.startedAt.ptr(), r.finishedAt.ptr()
	j.LeaseUntil, j.HeartbeatAt = r.lease.ptr(), r.heartbeat.ptr()
	// Most lists are empty: skip the decoder for them.
	if err := decodeList(r.tags, &j.Tags); err != nil {
		return nil, fmt.Errorf("decode tags of job %d: %w", j.ID, err)
	}
	if err := decodeList(r.deps, &j.DependsOn); err != nil {
		return nil, fmt.Errorf("decode depends_on of job %d: %w", j.ID, err)
	}
	if r.errs != "[]" {
		j.Errors = driver.DecodeAttemptErrors([]byte(r.errs))
	}
	j.FillEmpty()
	return j, nil
}

func scanJobs(rows *sql.Rows, err error) ([]*driver.Job, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*driver.Job
	s := newJobScanner()
	for rows.Next() {
		j, err := s.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// scanOne reads a single job; no row is driver.ErrNotFound.
func scanOne(rows *sql.Rows, err error) (*driver.Job, error) {
	jobs, err := scanJobs(rows, err)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, driver.ErrNotFound
	}
	return jobs[0], nil
}

// collect answers a reader of every row with fn: collect(fn)(query(…)).
func collect[T any](fn func(scanner) (T, error)) func(*sql.Rows, error) ([]T, error) {
	return func(rows *sql.Rows, err error) ([]T, error) { return collectRows(rows, err, fn) }
}

func collectRows[T any](rows *sql.Rows, err error, fn func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := fn(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func scanString(s scanner) (string, error) {
	var v string
	return v, s.Scan(&v)
}

func scanInt64(s scanner) (int64, error) {
	var v int64
	return v, s.Scan(&v)
}

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// micros is t in unix microseconds; nil for the zero time.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func jsonOr(b []byte, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// jsonText encodes v (a list or map) for json_each.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sqlitedriver: encode %T: %v", v, err))
	}
	return string(b)
}

// errorEntry is one attempt error as a JSON object, or nil.
func errorEntry(e *driver.AttemptError) any {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(e)
	return string(b)
}

func nullable(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func decodeList(text string, v any) error {
	if text == "[]" {
		return nil
	}
	return json.Unmarshal([]byte(text), v)
}
