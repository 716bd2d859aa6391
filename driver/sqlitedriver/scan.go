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

// scanJob reads one row of {{cols}}.
func scanJob(row scanner) (*driver.Job, error) {
	var (
		j                                       driver.Job
		op, workerID, key, workflow, stg        sql.NullString
		state, payload, metadata, tags, errs    string
		deps                                    string
		checkpoint, result                      sql.NullString
		runAt, createdAt, updatedAt             storedMicros
		startedAt, finishedAt, lease, heartbeat storedMicros
	)
	err := row.Scan(&j.ID, &j.Kind, &op, &j.Queue, &j.Tenant, &state, &j.Priority, &payload, &metadata,
		&tags, &j.Attempt, &j.MaxRetries, &runAt, &createdAt, &startedAt, &finishedAt, &updatedAt,
		&lease, &workerID, &heartbeat, &j.Progress, &j.ProgressMessage, &checkpoint, &result,
		&errs, &key, &deps, &workflow, &stg, &j.CancelRequested, &j.RunOnParentFailure)
	if err != nil {
		return nil, err
	}
	j.State = driver.JobState(state)
	j.Op, j.WorkerID, j.IdempotencyKey = op.String, workerID.String, key.String
	j.WorkflowID, j.Stage = workflow.String, stg.String
	j.Payload, j.Metadata = json.RawMessage(payload), json.RawMessage(metadata)
	if checkpoint.Valid {
		j.Checkpoint = json.RawMessage(checkpoint.String)
	}
	if result.Valid {
		j.Result = json.RawMessage(result.String)
	}
	j.RunAt, j.CreatedAt, j.UpdatedAt = runAt.time(), createdAt.time(), updatedAt.time()
	j.StartedAt, j.FinishedAt = startedAt.ptr(), finishedAt.ptr()
	j.LeaseUntil, j.HeartbeatAt = lease.ptr(), heartbeat.ptr()
	// Most lists are empty: skip the decoder for them.
	if err := decodeList(tags, &j.Tags); err != nil {
		return nil, fmt.Errorf("decode tags of job %d: %w", j.ID, err)
	}
	if err := decodeList(deps, &j.DependsOn); err != nil {
		return nil, fmt.Errorf("decode depends_on of job %d: %w", j.ID, err)
	}
	if errs != "[]" {
		j.Errors = driver.DecodeAttemptErrors([]byte(errs))
	}
	j.FillEmpty()
	return &j, nil
}

func scanJobs(rows *sql.Rows, err error) ([]*driver.Job, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*driver.Job
	for rows.Next() {
		j, err := scanJob(rows)
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
