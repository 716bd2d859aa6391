package pgdriver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skiplock/skiplock/driver"
)

// jobScanner reads rows of {{cols}}. Its scan targets are its own fields
// and are reused row after row: one claim reads up to a thousand jobs, and
// fresh targets (and the interface slice that names them) cost more than
// the job itself.
type jobScanner struct {
	j                                              driver.Job
	op, workerID, key, workflow, stage             pgtype.Text
	state                                          string
	errs                                           []byte
	startedAt, finishedAt, leaseUntil, heartbeatAt pgtype.Timestamptz
	priority, progress                             int16
	dest                                           []any
}

func newJobScanner() *jobScanner {
	s := &jobScanner{}
	j := &s.j
	// jsonb is read as bytes: a json.RawMessage target would make pgx parse
	// each document once more to validate what PostgreSQL already validated.
	s.dest = []any{&j.ID, &j.Kind, &s.op, &j.Queue, &j.Tenant, &s.state, &s.priority,
		(*[]byte)(&j.Payload), (*[]byte)(&j.Metadata), &j.Tags, &j.Attempt, &j.MaxRetries, &j.RunAt,
		&j.CreatedAt, &s.startedAt, &s.finishedAt, &j.UpdatedAt, &s.leaseUntil, &s.workerID, &s.heartbeatAt, &s.progress,
		&j.ProgressMessage, (*[]byte)(&j.Checkpoint), (*[]byte)(&j.Result), &s.errs, &s.key, &j.DependsOn,
		&s.workflow, &s.stage, &j.CancelRequested, &j.RunOnParentFailure}
	return s
}

// scan reads row into a new job. pgx allocates every string, slice and
// document anew, so the job shares nothing with the next row.
func (s *jobScanner) scan(row pgx.Row) (*driver.Job, error) {
	if err := row.Scan(s.dest...); err != nil {
		return nil, err
	}
	j := new(driver.Job)
	*j = s.j
	j.State = driver.JobState(s.state)
	j.Priority, j.Progress = int(s.priority), int(s.progress)
	j.Op, j.WorkerID, j.IdempotencyKey = s.op.String, s.workerID.String, s.key.String
	j.WorkflowID, j.Stage = s.workflow.String, s.stage.String
	j.StartedAt, j.FinishedAt = utc(s.startedAt), utc(s.finishedAt)
	j.LeaseUntil, j.HeartbeatAt = utc(s.leaseUntil), utc(s.heartbeatAt)
	j.RunAt, j.CreatedAt, j.UpdatedAt = j.RunAt.UTC(), j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	if len(s.errs) > 0 && string(s.errs) != "[]" { // most jobs have no errors: skip the decoder
		if err := json.Unmarshal(s.errs, &j.Errors); err != nil {
			return nil, fmt.Errorf("decode errors of job %d: %w", j.ID, err)
		}
	}
	j.FillEmpty()
	return j, nil
}

// scanJob reads one row of {{cols}}.
func scanJob(row pgx.Row) (*driver.Job, error) { return newJobScanner().scan(row) }

func scanJobs(rows pgx.Rows, err error) ([]*driver.Job, error) {
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

func utc(t pgtype.Timestamptz) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
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
