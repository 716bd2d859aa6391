package sqlitedriver

import (
	"context"
	"database/sql"
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) JobList(ctx context.Context, p driver.ListParams) ([]*driver.Job, error) {
	args, err := jobListArgs(p)
	if err != nil {
		return nil, err
	}
	if p.IdempotencyKey != "" {
		return scanJobs(e.r.QueryContext(ctx, jobListByKey, named("JobList", args...)...))
	}
	return scanJobs(e.rquery(ctx, "JobList", args...))
}

// jobListArgs are the parameters of JobList for p.
func jobListArgs(p driver.ListParams) ([]any, error) {
	live, archived := p.Reads()
	limit := p.PageSize()
	f, err := jobFilterArgs(p.Filter())
	if err != nil {
		return nil, err
	}
	return append(f, sql.Named("live", live), sql.Named("archived", archived),
		sql.Named("before_id", p.BeforeID), sql.Named("limit", limit)), nil
}

// jobFilterArgs are the parameters of the JobFilter fragment for f: its
// lists JSON arrays, NULL when empty.
func jobFilterArgs(f driver.Filter) ([]any, error) {
	meta, payload, err := f.Paths()
	if err != nil {
		return nil, err
	}
	var tenant any
	if f.Tenant != nil {
		tenant = *f.Tenant
	}
	return []any{sql.Named("states", jsonList(f.StateNames())), sql.Named("kinds", jsonList(f.Kinds)),
		sql.Named("queues", jsonList(f.Queues)), sql.Named("tenant", tenant), sql.Named("ids", jsonList(f.IDs)),
		sql.Named("workflow_id", f.WorkflowID), sql.Named("tags", jsonList(f.Tags)),
		sql.Named("metadata", textOrNil(meta)), sql.Named("payload", textOrNil(payload)),
		sql.Named("worker_id", f.WorkerID), sql.Named("idempotency_key", f.IdempotencyKey),
		sql.Named("error_type", f.ErrorType), sql.Named("error_message", f.ErrorMessage),
		sql.Named("created_after", optMicros(f.CreatedAfter)), sql.Named("created_before", optMicros(f.CreatedBefore)),
		sql.Named("finished_after", optMicros(f.FinishedAfter)), sql.Named("finished_before", optMicros(f.FinishedBefore))}, nil
}

// jsonList answers a list as a JSON array, nil when empty.
func jsonList[T any](list []T) any {
	if len(list) == 0 {
		return nil
	}
	return jsonText(list)
}

// textOrNil answers JSON as text, nil when none.
func textOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// optMicros answers a time as stored (unix microseconds), nil for zero.
func optMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}
