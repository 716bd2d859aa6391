package sqlitedriver

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// JobRestore inserts the jobs one statement each in one write transaction
// (the writer is the only one, so nothing waits on it but other writes).
func (e executor) JobRestore(ctx context.Context, jobs []*driver.Job, into driver.RestoreTarget) ([]int64, error) {
	if !into.Valid() {
		return nil, fmt.Errorf("restore: unknown target %q", into)
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	var ids []int64
	var queues []string
	err := e.inTx(ctx, func(tx executor) error {
		ids, queues = nil, nil
		var maxID int64
		for _, j := range jobs {
			ok, err := tx.restoreOne(ctx, j, into, &queues)
			if err != nil {
				return fmt.Errorf("restore job %d into the %s: %w", j.ID, into, err)
			}
			if ok {
				ids = append(ids, j.ID)
				maxID = max(maxID, j.ID)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		for _, name := range []string{"JobRestoreSequence", "JobRestoreSequenceNew"} {
			if _, err := tx.wexec(ctx, name, sql.Named("max_id", maxID)); err != nil {
				return fmt.Errorf("restore: id counter: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.notify(queues)
	slices.Sort(ids)
	return ids, nil
}

// restoreOne inserts j and answers whether it was (not skipped); a job
// restored into the queue adds its queue to queues.
func (e executor) restoreOne(ctx context.Context, j *driver.Job, into driver.RestoreTarget, queues *[]string) (bool, error) {
	args := restoreArgs(j)
	if into == driver.RestoreArchive {
		rows, err := e.wquery(ctx, "JobRestoreArchive", args...)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		ok := rows.Next()
		return ok, rows.Err()
	}
	_, now, _ := nowArgs()
	rows, err := e.wquery(ctx, "JobRestoreQueue", append(args, now)...)
	if err != nil {
		return false, err
	}
	var id int64
	var queue, state string
	ok := rows.Next()
	if ok {
		err = rows.Scan(&id, &queue, &state)
	}
	rows.Close()
	if err = firstErr(err, rows.Err()); err != nil || !ok {
		return false, err
	}
	if !slices.Contains(*queues, queue) {
		*queues = append(*queues, queue)
	}
	if driver.JobState(state) == driver.StateWaiting {
		_, err = e.wexec(ctx, "JobRestoreDeps", sql.Named("id", j.ID), sql.Named("depends_on", jsonText(j.DependsOn)))
	}
	return true, err
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// restoreArgs are the named arguments of JobRestoreQueue and
// JobRestoreArchive: one a column, as the driver stores it.
func restoreArgs(j *driver.Job) []any {
	deps := "[]"
	if len(j.DependsOn) > 0 {
		deps = jsonText(j.DependsOn)
	}
	errs := "[]"
	if len(j.Errors) > 0 {
		errs = jsonText(j.Errors)
	}
	return []any{sql.Named("id", j.ID), sql.Named("kind", j.Kind), sql.Named("op", j.Op),
		sql.Named("queue", j.Queue), sql.Named("tenant", j.Tenant), sql.Named("state", string(j.State)),
		sql.Named("priority", j.Priority), sql.Named("payload", jsonOr(j.Payload, "{}")),
		sql.Named("metadata", jsonOr(j.Metadata, "{}")), sql.Named("tags", tagsJSON(j.Tags)),
		sql.Named("attempt", j.Attempt), sql.Named("max_retries", j.MaxRetries),
		sql.Named("run_at", micros(j.RunAt)), sql.Named("created_at", micros(j.CreatedAt)),
		sql.Named("started_at", microsOf(j.StartedAt)), sql.Named("finished_at", microsOf(j.FinishedAt)),
		sql.Named("updated_at", micros(j.UpdatedAt)), sql.Named("lease_until", microsOf(j.LeaseUntil)),
		sql.Named("worker_id", j.WorkerID), sql.Named("heartbeat_at", microsOf(j.HeartbeatAt)),
		sql.Named("progress", j.Progress), sql.Named("progress_message", j.ProgressMessage),
		sql.Named("checkpoint", jsonOrNil(j.Checkpoint)), sql.Named("result", jsonOrNil(j.Result)),
		sql.Named("errors", errs), sql.Named("idempotency_key", j.IdempotencyKey), sql.Named("depends_on", deps),
		sql.Named("workflow_id", j.WorkflowID), sql.Named("stage", j.Stage),
		sql.Named("cancel_requested", j.CancelRequested), sql.Named("run_on_parent_failure", j.RunOnParentFailure),
		sql.Named("attempt_base", j.AttemptBase)}
}

func microsOf(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

// jsonOrNil answers JSON text, nil (NULL) for an unset field or JSON null.
func jsonOrNil(b []byte) any {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return string(b)
}
