package pgdriver

import (
	"time"

	"github.com/skiplock/skiplock/driver"
)

var copyColumns = []string{"id", "kind", "op", "queue", "tenant", "state", "priority", "payload", "metadata",
	"tags", "max_retries", "run_at", "workflow_id", "stage"}

// copyColumnsPlain leave op, metadata, tags, workflow_id and stage to their
// defaults (NULL, '{}', '{}'): most batches set none of them, and the
// server then parses five values fewer per row.
var copyColumnsPlain = []string{"id", "kind", "queue", "tenant", "state", "priority", "payload", "max_retries", "run_at"}

// copySource feeds COPY one row per job, with ids taken from the sequence.
type copySource struct {
	jobs []*driver.InsertParams
	ids  []int64
	i    int
	now  time.Time
	// plain sends copyColumnsPlain (see newCopySource).
	plain bool
	// row is reused: COPY encodes each row before it asks for the next.
	row []any
}

// newCopySource answers the source for jobs and the columns it sends.
func newCopySource(jobs []*driver.InsertParams, ids []int64) (*copySource, []string) {
	s := &copySource{jobs: jobs, ids: ids, plain: true}
	for _, p := range jobs {
		if p.Op != "" || len(p.Metadata) > 0 || len(p.Tags) > 0 || p.WorkflowID != "" || p.Stage != "" {
			s.plain = false
			return s, copyColumns
		}
	}
	return s, copyColumnsPlain
}

func (s *copySource) Next() bool {
	if s.i == 0 {
		s.now = time.Now()
	}
	s.i++
	return s.i <= len(s.jobs)
}

func (s *copySource) Values() ([]any, error) {
	p := s.jobs[s.i-1]
	runAt, state := p.RunAt, driver.StatePending
	if runAt.IsZero() {
		runAt = s.now
	}
	if runAt.After(s.now) {
		state = driver.StateScheduled
	}
	if p.Paused {
		state = driver.StatePaused
	}
	if s.plain {
		s.row = append(s.row[:0], s.ids[s.i-1], p.Kind, p.Queue, p.Tenant, string(state), int16(p.Priority),
			jsonOr(p.Payload, "{}"), int32(p.MaxRetries), runAt)
		return s.row, nil
	}
	tags := p.Tags
	if tags == nil {
		tags = []string{}
	}
	s.row = append(s.row[:0], s.ids[s.i-1], p.Kind, nullString(p.Op), p.Queue, p.Tenant, string(state), int16(p.Priority),
		jsonOr(p.Payload, "{}"), jsonOr(p.Metadata, "{}"), tags, int32(p.MaxRetries), runAt,
		nullString(p.WorkflowID), nullString(p.Stage))
	return s.row, nil
}

func (s *copySource) Err() error { return nil }

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
