package pgdriver

import (
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skiplock/skiplock/driver"
)

// jobScanner reads rows of {{cols}}. Its scan targets are its own fields
// and are reused row after row: one claim reads up to a thousand jobs, and
// fresh targets (and the interface slice that names them) cost more than
// the job itself. The rows of a claim repeat their names (kind, queue,
// tenant, state, worker): the scanner keeps one string per value instead of
// one per row, and it hands out the jobs' optional times from a shared
// block.
type jobScanner struct {
	j                                              driver.Job
	op, workerID, key, workflow, stage, state      string
	errs                                           rawBytes
	startedAt, finishedAt, leaseUntil, heartbeatAt pgtype.Timestamptz
	priority, progress                             int16
	dest                                           []any
	texts                                          [10]sharedText    // one per name() in target
	names                                          map[string]string // made at the first name
	times                                          []time.Time
}

func newJobScanner() *jobScanner {
	s := &jobScanner{}
	s.dest = make([]any, len(driver.JobColumns))
	n := 0
	for i, c := range driver.JobColumns {
		s.dest[i] = s.target(c, &n)
	}
	return s
}

// target answers the scan target of job column c (driver.JobColumns);
// n counts the shared texts handed out. A column without a target panics
// when the package loads (columnsChecked).
func (s *jobScanner) target(c string, n *int) any {
	j := &s.j
	name := func(dst *string) any { // a pointer into texts: no allocation
		t := &s.texts[*n]
		t.dst, t.s = dst, s
		*n++
		return t
	}
	// jsonb is read as bytes: a json.RawMessage target would make pgx parse
	// each document once more to validate what PostgreSQL already validated.
	switch c {
	case "id":
		return &j.ID
	case "kind":
		return name(&j.Kind)
	case "op":
		return name(&s.op)
	case "queue":
		return name(&j.Queue)
	case "tenant":
		return name(&j.Tenant)
	case "state":
		return name(&s.state)
	case "priority":
		return &s.priority
	case "payload":
		return (*[]byte)(&j.Payload)
	case "metadata":
		return (*[]byte)(&j.Metadata)
	case "tags":
		return &j.Tags
	case "attempt":
		return &j.Attempt
	case "max_retries":
		return &j.MaxRetries
	case "attempt_base":
		return &j.AttemptBase
	case "run_at":
		return scanTime(&j.RunAt)
	case "created_at":
		return scanTime(&j.CreatedAt)
	case "started_at":
		return &s.startedAt
	case "finished_at":
		return &s.finishedAt
	case "updated_at":
		return scanTime(&j.UpdatedAt)
	case "lease_until":
		return &s.leaseUntil
	case "worker_id":
		return name(&s.workerID)
	case "heartbeat_at":
		return &s.heartbeatAt
	case "progress":
		return &s.progress
	case "progress_message":
		return name(&j.ProgressMessage)
	case "checkpoint":
		return (*[]byte)(&j.Checkpoint)
	case "result":
		return (*[]byte)(&j.Result)
	case "errors":
		return &s.errs
	case "idempotency_key":
		return name(&s.key)
	case "depends_on":
		return &j.DependsOn
	case "workflow_id":
		return name(&s.workflow)
	case "stage":
		return name(&s.stage)
	case "cancel_requested":
		return &j.CancelRequested
	case "run_on_parent_failure":
		return &j.RunOnParentFailure
	}
	panic("pgdriver: no scan target for job column " + c)
}

// A job column without a scan target fails when the package loads.
func init() { newJobScanner() }

// scan reads row into a new job. pgx allocates every slice and document
// anew, so the job shares nothing mutable with the next row.
func (s *jobScanner) scan(row pgx.Row) (*driver.Job, error) {
	if err := row.Scan(s.dest...); err != nil {
		return nil, err
	}
	j := new(driver.Job)
	*j = s.j
	j.State = driver.JobState(s.state)
	j.Priority, j.Progress = int(s.priority), int(s.progress)
	j.Op, j.WorkerID, j.IdempotencyKey = s.op, s.workerID, s.key
	j.WorkflowID, j.Stage = s.workflow, s.stage
	j.StartedAt, j.FinishedAt = s.utc(s.startedAt), s.utc(s.finishedAt)
	j.LeaseUntil, j.HeartbeatAt = s.utc(s.leaseUntil), s.utc(s.heartbeatAt)
	if len(s.errs) > 0 && string(s.errs) != "[]" { // most jobs have no errors: skip the decoder
		j.Errors = driver.DecodeAttemptErrors(s.errs)
	}
	j.FillEmpty()
	return j, nil
}

// utc answers t in UTC, or nil when NULL, from the scanner's block of times.
func (s *jobScanner) utc(t pgtype.Timestamptz) *time.Time {
	if !t.Valid {
		return nil
	}
	if len(s.times) == cap(s.times) {
		// A first row's times fit in a small block; a claim's many rows
		// take blocks of 256.
		s.times = make([]time.Time, 0, min(256, 4+cap(s.times)*16))
	}
	s.times = append(s.times, finite(t))
	return &s.times[len(s.times)-1]
}

// maxNames bounds the strings a scanner keeps: the values that repeat are
// few, and idempotency keys, which do not, must not grow it without end.
const maxNames = 64

// sharedText scans a text column (NULL: "") into dst, taking the string from
// the scanner's names when an earlier row had the same value.
type sharedText struct {
	dst *string
	s   *jobScanner
}

func (t *sharedText) ScanBytes(b []byte) error {
	if len(b) == 0 {
		*t.dst = ""
		return nil
	}
	if v, ok := t.s.names[string(b)]; ok {
		*t.dst = v
		return nil
	}
	v := string(b)
	if t.s.names == nil {
		t.s.names = make(map[string]string)
	}
	if len(t.s.names) < maxNames {
		t.s.names[v] = v
	}
	*t.dst = v
	return nil
}

// rawBytes scans a column into the scanner's own buffer, reused row after
// row: for a document that is decoded at once and not kept. (The row's
// bytes themselves are not safe to keep: a QueryRow gives its connection
// back to the pool before Scan returns.)
type rawBytes []byte

func (r *rawBytes) ScanBytes(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
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
