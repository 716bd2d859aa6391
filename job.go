package skiplock

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skiplock/skiplock/driver"
)

// JobArgs is a typed job payload: its JSON is the job's payload and Kind
// names the job type.
type JobArgs interface {
	Kind() string
}

// JobRow is a job as stored.
type JobRow = driver.Job

// JobState is where a job is in its life.
type JobState = driver.JobState

// AttemptError is one failed attempt recorded on a job.
type AttemptError = driver.AttemptError

// The job states; see docs/jobs.md#states.
const (
	StateScheduled = driver.StateScheduled
	StateWaiting   = driver.StateWaiting
	StatePending   = driver.StatePending
	StateRunning   = driver.StateRunning
	StatePaused    = driver.StatePaused
	StateCompleted = driver.StateCompleted
	StateFailed    = driver.StateFailed
	StateCancelled = driver.StateCancelled
)

// RawArgs is a job of any kind with a JSON payload, for callers that have
// no Go type for it (the HTTP server, the CLI).
type RawArgs struct {
	KindName string
	Payload  json.RawMessage
}

func (r RawArgs) Kind() string { return r.KindName }

// MarshalJSON answers the payload as it is ({} when empty).
func (r RawArgs) MarshalJSON() ([]byte, error) {
	if len(r.Payload) == 0 {
		return []byte("{}"), nil
	}
	return r.Payload, nil
}

// Job is a running job handed to a worker: its row and its decoded args.
type Job[T JobArgs] struct {
	*JobRow
	Args T

	run *runningJob
}

// Progress reports how far the job is (0–100) with a line of text; it also
// extends the lease.
func (j *Job[T]) Progress(ctx context.Context, percent int, message string) error {
	if percent < 0 || percent > 100 {
		return invalid("progress", "must be between 0 and 100, got %d", percent)
	}
	return j.run.report(ctx, driver.ProgressParams{Progress: &percent, ProgressMessage: &message})
}

// SaveCheckpoint stores v (as JSON) on the job; the next attempt finds it
// with LoadCheckpoint, e.g. the page token a crawl reached.
func (j *Job[T]) SaveCheckpoint(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	if err := j.run.report(ctx, driver.ProgressParams{Checkpoint: b}); err != nil {
		return err
	}
	j.Checkpoint = b
	return nil
}

// LoadCheckpoint decodes the last saved checkpoint into v and reports
// whether there was one.
func (j *Job[T]) LoadCheckpoint(v any) (bool, error) {
	if len(j.Checkpoint) == 0 || string(j.Checkpoint) == "null" {
		return false, nil
	}
	return true, json.Unmarshal(j.Checkpoint, v)
}

// SetResult stores v (as JSON) as the job's result when it completes.
func (j *Job[T]) SetResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	j.run.result = b
	return nil
}

// Next inserts a next-stage job in the same transaction as this job's
// completion: if the completion does not commit, neither does the job. It
// inherits this job's workflow id and tenant unless opts sets them.
func (j *Job[T]) Next(args JobArgs, opts *InsertOpts) {
	j.run.next = append(j.run.next, nextJob{args: args, opts: opts})
}
