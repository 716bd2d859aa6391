package pgdriver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// scanJob reads one row of {{cols}}.
func scanJob(row pgx.Row) (*driver.Job, error) {
	var (
		j                                 driver.Job
		op, workerID, key, workflow, stg  *string
		state                             string
		errs                              []byte
		startedAt, finishedAt, leaseUntil *time.Time
		heartbeatAt                       *time.Time
		priority, progress                int16
	)
	// jsonb is read as bytes: a json.RawMessage target would make pgx parse
	// each document once more to validate what PostgreSQL already validated.
	err := row.Scan(&j.ID, &j.Kind, &op, &j.Queue, &j.Tenant, &state, &priority,
		(*[]byte)(&j.Payload), (*[]byte)(&j.Metadata), &j.Tags, &j.Attempt, &j.MaxRetries, &j.RunAt,
		&j.CreatedAt, &startedAt, &finishedAt, &j.UpdatedAt, &leaseUntil, &workerID, &heartbeatAt, &progress,
		&j.ProgressMessage, (*[]byte)(&j.Checkpoint), (*[]byte)(&j.Result), &errs, &key, &j.DependsOn,
		&workflow, &stg, &j.CancelRequested, &j.RunOnParentFailure)
	if err != nil {
		return nil, err
	}
	j.State = driver.JobState(state)
	j.Priority, j.Progress = int(priority), int(progress)
	j.Op, j.WorkerID, j.IdempotencyKey = deref(op), deref(workerID), deref(key)
	j.WorkflowID, j.Stage = deref(workflow), deref(stg)
	j.StartedAt, j.FinishedAt = utc(startedAt), utc(finishedAt)
	j.LeaseUntil, j.HeartbeatAt = utc(leaseUntil), utc(heartbeatAt)
	j.RunAt, j.CreatedAt, j.UpdatedAt = j.RunAt.UTC(), j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	if len(errs) > 0 && string(errs) != "[]" { // most jobs have no errors: skip the decoder
		if err := json.Unmarshal(errs, &j.Errors); err != nil {
			return nil, fmt.Errorf("decode errors of job %d: %w", j.ID, err)
		}
	}
	j.FillEmpty()
	return &j, nil
}

func scanJobs(rows pgx.Rows, err error) ([]*driver.Job, error) {
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
func scanOne(row pgx.Row) (*driver.Job, error) {
	j, err := scanJob(row)
	if err == pgx.ErrNoRows {
		return nil, driver.ErrNotFound
	}
	return j, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	*t = t.UTC() // t is the scan's own copy
	return t
}

func nullable(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func secs(d time.Duration) float64 { return d.Seconds() }

func errorEntry(e *driver.AttemptError) string {
	if e == nil {
		return "[]"
	}
	b, _ := json.Marshal([]driver.AttemptError{*e})
	return string(b)
}
