package skiplock

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// WorkMiddleware wraps each attempt of a job worked by this client: it sees
// the job as claimed and calls next to run the worker (or the next
// middleware), possibly with a context of its own; what it returns is the
// attempt's outcome, as a worker's error is. A panic in the worker reaches
// it as a *PanicError. Config.WorkMiddleware lists them outermost first.
type WorkMiddleware func(ctx context.Context, job *JobRow, next func(ctx context.Context) error) error

// InsertMiddleware wraps each insert made through this client (Insert,
// InsertTx, InsertMany, InsertBatch, InsertStream, next stages): it sees the
// jobs about to be stored, with their contract and defaults applied, may
// change their Metadata and Tags, and calls next to store them. Returning
// an error without calling next refuses the insert: nothing is stored and
// the caller gets the error. Config.InsertMiddleware lists them outermost
// first.
type InsertMiddleware func(ctx context.Context, jobs []*InsertJob, next func(ctx context.Context) error) error

// InsertJob is a job on its way into the database, as an InsertMiddleware
// sees it. Metadata and Tags may be changed before next is called; the
// other fields are read only. Once next returned nil, ID is the job's id
// and Duplicate tells whether its idempotency key matched a live job.
type InsertJob struct {
	Kind, Op, Queue, Tenant string
	Priority, MaxRetries    int
	// RunAt is when the job may run; zero means now.
	RunAt             time.Time
	Payload           json.RawMessage
	Metadata          json.RawMessage
	Tags              []string
	IdempotencyKey    string
	WorkflowID, Stage string
	ID                int64
	Duplicate         bool
}

// MetadataValue decodes the metadata key into v and reports whether it
// was there.
func (j *InsertJob) MetadataValue(key string, v any) (bool, error) {
	return metadataValue(j.Metadata, key, v)
}

// SetMetadata sets one key of the job's metadata (a JSON object; created
// when the job has none) to v as JSON.
func (j *InsertJob) SetMetadata(key string, v any) error {
	m := map[string]json.RawMessage{}
	if len(j.Metadata) > 0 && string(j.Metadata) != "null" {
		if err := json.Unmarshal(j.Metadata, &m); err != nil {
			return invalid("metadata", "must be a JSON object to set %q in it", key)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return invalid("metadata."+key, "cannot encode %T as JSON: %v", v, err)
	}
	m[key] = b
	if j.Metadata, err = json.Marshal(m); err != nil {
		return fmt.Errorf("encode metadata: %w", err)
	}
	return nil
}

// MetadataValue decodes the metadata key of a job row into v and reports
// whether it was there; metadata that is not a JSON object has no keys.
func MetadataValue(job *JobRow, key string, v any) (bool, error) {
	return metadataValue(job.Metadata, key, v)
}

func metadataValue(meta json.RawMessage, key string, v any) (bool, error) {
	if len(meta) == 0 || meta[0] != '{' {
		return false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil {
		return false, fmt.Errorf("decode metadata: %w", err)
	}
	raw, ok := m[key]
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

// workChain folds the work middleware around a call, outermost first; nil
// when there is none, so that the work path stays as it is.
func workChain(mws []WorkMiddleware) func(ctx context.Context, job *JobRow, call func(context.Context) error) error {
	if len(mws) == 0 {
		return nil
	}
	return func(ctx context.Context, job *JobRow, call func(context.Context) error) error {
		return runWork(mws, ctx, job, call)
	}
}

func runWork(mws []WorkMiddleware, ctx context.Context, job *JobRow, call func(context.Context) error) error {
	if len(mws) == 0 {
		return call(ctx)
	}
	return mws[0](ctx, job, func(ctx context.Context) error { return runWork(mws[1:], ctx, job, call) })
}

// insertThrough stores params with store, through the insert middleware
// when there is any. store answers the ids (and duplicates) of the jobs in
// order.
func (c *Client) insertThrough(ctx context.Context, params []*driver.InsertParams,
	store func(ctx context.Context) ([]int64, []bool, error)) error {
	mws := c.config.InsertMiddleware
	if len(mws) == 0 {
		_, _, err := store(ctx)
		return err
	}
	jobs := make([]*InsertJob, len(params))
	for i, p := range params {
		jobs[i] = &InsertJob{Kind: p.Kind, Op: p.Op, Queue: p.Queue, Tenant: p.Tenant, Priority: p.Priority,
			MaxRetries: p.MaxRetries, RunAt: p.RunAt, Payload: p.Payload, Metadata: p.Metadata, Tags: p.Tags,
			IdempotencyKey: p.IdempotencyKey, WorkflowID: p.WorkflowID, Stage: p.Stage}
	}
	stored := false
	inner := func(ctx context.Context) error {
		if stored {
			return fmt.Errorf("insert middleware called next twice")
		}
		for i, j := range jobs {
			if len(j.Metadata) > 0 && !json.Valid(j.Metadata) {
				return invalid("metadata", "insert middleware set invalid JSON on job %d of kind %q", i, j.Kind)
			}
			params[i].Metadata, params[i].Tags = j.Metadata, j.Tags
		}
		stored = true
		ids, dups, err := store(ctx)
		for i := range ids {
			jobs[i].ID = ids[i]
			if dups != nil {
				jobs[i].Duplicate = dups[i]
			}
		}
		return err
	}
	return runInsert(mws, ctx, jobs, inner)
}

func runInsert(mws []InsertMiddleware, ctx context.Context, jobs []*InsertJob, store func(context.Context) error) error {
	if len(mws) == 0 {
		return store(ctx)
	}
	return mws[0](ctx, jobs, func(ctx context.Context) error { return runInsert(mws[1:], ctx, jobs, store) })
}

// insertResultIDs answers the ids and duplicate flags of results.
func insertResultIDs(res []driver.InsertResult) ([]int64, []bool) {
	ids, dups := make([]int64, len(res)), make([]bool, len(res))
	for i, r := range res {
		ids[i], dups[i] = r.Job.ID, r.Duplicate
	}
	return ids, dups
}
