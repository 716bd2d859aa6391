package sqlitedriver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

// JobInsertMany inserts in one write transaction; keys and dependencies
// need no locks beyond it, since the writer is the only one.
func (e executor) JobInsertMany(ctx context.Context, jobs []*driver.InsertParams) ([]driver.InsertResult, error) {
	out := make([]driver.InsertResult, len(jobs))
	err := e.inTx(ctx, func(tx executor) error {
		for i, p := range jobs {
			r, err := tx.insertOne(ctx, p)
			if err != nil {
				return driver.InBatch(err, i, len(jobs), p.Kind)
			}
			out[i] = r
		}
		return tx.insertResultFlow(ctx, jobs, out)
	})
	return out, err
}

func (e executor) JobInsertStart(ctx context.Context, p *driver.InsertParams, start driver.StartParams) (*driver.Job, error) {
	if !p.Plain() || p.Flow != nil {
		return nil, fmt.Errorf("insert and start: job of kind %q has an idempotency key, dependencies or flow keys", p.Kind)
	}
	if err := checkDocs(p); err != nil {
		return nil, err
	}
	var j *driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		var err error
		j, err = scanOne(tx.wquery(ctx, "JobInsertStart", sql.Named("kind", p.Kind), sql.Named("op", p.Op),
			sql.Named("queue", p.Queue), sql.Named("tenant", p.Tenant), sql.Named("paused", p.Paused),
			sql.Named("priority", p.Priority), sql.Named("payload", jsonOr(p.Payload, "{}")),
			sql.Named("metadata", jsonOr(p.Metadata, "{}")), sql.Named("tags", tagsJSON(p.Tags)),
			sql.Named("max_retries", p.MaxRetries), sql.Named("run_at", micros(p.RunAt)), now,
			sql.Named("workflow", p.WorkflowID), sql.Named("stage", p.Stage), sql.Named("ropf", p.RunOnParentFailure),
			sql.Named("worker", start.WorkerID), sql.Named("lease", start.Lease.Microseconds())))
		return err
	})
	return j, err
}

// JobInsertFast inserts plain jobs with one prepared statement in one
// transaction and answers their ids in order.
func (e executor) JobInsertFast(ctx context.Context, jobs []*driver.InsertParams) ([]int64, error) {
	ids := make([]int64, len(jobs))
	err := e.inTx(ctx, func(tx executor) error {
		nowUS, now, _ := nowArgs()
		stmt := tx.stmtFor(ctx, "JobInsertFast")
		if stmt == nil {
			var err error
			if stmt, err = tx.tx.PrepareContext(ctx, q("JobInsertFast")); err != nil {
				return err
			}
		}
		for i, p := range jobs {
			if err := checkDocs(p); err != nil {
				return driver.InBatch(err, i, len(jobs), p.Kind)
			}
			runAt, state := nowUS, driver.StatePending
			if !p.RunAt.IsZero() {
				runAt = p.RunAt.UnixMicro()
			}
			if runAt > nowUS {
				state = driver.StateScheduled
			}
			if p.Paused {
				state = driver.StatePaused
			}
			res, err := stmt.ExecContext(ctx, sql.Named("kind", p.Kind), sql.Named("op", p.Op),
				sql.Named("queue", p.Queue), sql.Named("tenant", p.Tenant), sql.Named("state", string(state)),
				sql.Named("priority", p.Priority), sql.Named("payload", jsonOr(p.Payload, "{}")),
				sql.Named("metadata", jsonOr(p.Metadata, "{}")), sql.Named("tags", tagsJSON(p.Tags)),
				sql.Named("max_retries", p.MaxRetries), sql.Named("run_at", runAt), now,
				sql.Named("workflow", p.WorkflowID), sql.Named("stage", p.Stage))
			if err != nil {
				return err
			}
			if ids[i], err = res.LastInsertId(); err != nil {
				return err
			}
		}
		return tx.flowTag(ctx, jobs, ids, nil)
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// checkDocs refuses a payload or metadata that is not JSON, as PostgreSQL's
// jsonb does: SQLite would store any text.
func checkDocs(p *driver.InsertParams) error {
	if len(p.Payload) > 0 && !json.Valid(p.Payload) {
		return fmt.Errorf("job of kind %q: payload is not valid JSON", p.Kind)
	}
	if len(p.Metadata) > 0 && !json.Valid(p.Metadata) {
		return fmt.Errorf("job of kind %q: metadata is not valid JSON", p.Kind)
	}
	return nil
}

func tagsJSON(tags []string) string {
	if len(tags) == 0 {
		return "[]"
	}
	return jsonText(tags)
}

func insertArgs(p *driver.InsertParams, waiting bool, now sql.NamedArg) []any {
	deps := "[]"
	if len(p.DependsOn) > 0 {
		deps = jsonText(p.DependsOn)
	}
	return []any{sql.Named("kind", p.Kind), sql.Named("op", p.Op), sql.Named("queue", p.Queue),
		sql.Named("tenant", p.Tenant), sql.Named("paused", p.Paused), sql.Named("waiting", waiting),
		sql.Named("priority", p.Priority), sql.Named("payload", jsonOr(p.Payload, "{}")),
		sql.Named("metadata", jsonOr(p.Metadata, "{}")), sql.Named("tags", tagsJSON(p.Tags)),
		sql.Named("max_retries", p.MaxRetries), sql.Named("run_at", micros(p.RunAt)), now,
		sql.Named("key", p.IdempotencyKey), sql.Named("deps", deps), sql.Named("workflow", p.WorkflowID),
		sql.Named("stage", p.Stage), sql.Named("ropf", p.RunOnParentFailure)}
}

// insertOne inserts one job inside the write transaction, honouring its key
// and its dependencies.
func (e executor) insertOne(ctx context.Context, p *driver.InsertParams) (driver.InsertResult, error) {
	if err := checkDocs(p); err != nil {
		return driver.InsertResult{}, err
	}
	parents, err := e.parentStates(ctx, p.DependsOn)
	if err != nil {
		return driver.InsertResult{}, err
	}
	waiting := false
	for _, st := range parents {
		if st != driver.StateCompleted {
			waiting = true
		}
	}
	nowUS, now, _ := nowArgs()
	var res driver.InsertResult
	if p.IdempotencyKey != "" && p.UniquePolicy == "window" {
		res, err = e.insertWindowed(ctx, p, insertArgs(p, waiting, now), nowUS)
	} else {
		res, err = e.insertActive(ctx, p, insertArgs(p, waiting, now))
	}
	if err != nil || res.Duplicate || !waiting {
		return res, err
	}
	if err := e.linkParents(ctx, res.Job, parents); err != nil {
		return res, err
	}
	// Linking may have released or cancelled the job already.
	res.Job, err = e.jobGet(ctx, e.w, res.Job.ID)
	return res, err
}

// insertActive keeps one live job per key: a conflict returns the holder.
func (e executor) insertActive(ctx context.Context, p *driver.InsertParams, args []any) (driver.InsertResult, error) {
	j, err := scanOne(e.wquery(ctx, "JobInsert", args...))
	if err == nil {
		return driver.InsertResult{Job: j}, nil
	}
	if err != driver.ErrNotFound {
		return driver.InsertResult{}, err
	}
	j, err = scanOne(e.wquery(ctx, "JobByKey", sql.Named("tenant", p.Tenant), sql.Named("key", p.IdempotencyKey)))
	if err != nil {
		return driver.InsertResult{}, fmt.Errorf("read holder of key %q: %w", p.IdempotencyKey, err)
	}
	return driver.InsertResult{Job: j, Duplicate: true}, nil
}

// insertWindowed takes the key for the window, or returns the job holding it.
func (e executor) insertWindowed(ctx context.Context, p *driver.InsertParams, args []any, nowUS int64) (driver.InsertResult, error) {
	tenant, key := sql.Named("tenant", p.Tenant), sql.Named("key", p.IdempotencyKey)
	var holder, expires int64
	err := e.w.QueryRowContext(ctx, q("UniqueKeyHolder"), named("UniqueKeyHolder", tenant, key)...).Scan(&holder, &expires)
	if err != nil && err != sql.ErrNoRows {
		return driver.InsertResult{}, err
	}
	if err == nil && expires > nowUS {
		j, err := e.jobGet(ctx, e.w, holder)
		if err == nil {
			return driver.InsertResult{Job: j, Duplicate: true}, nil
		}
		if err != driver.ErrNotFound {
			return driver.InsertResult{}, err
		}
	}
	// A live job still holding the key after its window stays the one.
	res, err := e.insertActive(ctx, p, args)
	if err != nil || res.Duplicate {
		return res, err
	}
	_, err = e.wexec(ctx, "UniqueKeyPut", tenant, key, sql.Named("job", res.Job.ID),
		sql.Named("expires", nowUS+p.UniqueWindow.Microseconds()))
	return res, err
}

// parentStates answers the state of each parent; the write transaction
// keeps them from finishing unseen.
func (e executor) parentStates(ctx context.Context, ids []int64) (map[int64]driver.JobState, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	type row struct {
		id int64
		st string
	}
	rows, err := collect(func(s scanner) (row, error) {
		var r row
		return r, s.Scan(&r.id, &r.st)
	})(e.wquery(ctx, "JobParentStates", sql.Named("ids", jsonText(ids))))
	if err != nil {
		return nil, err
	}
	states := map[int64]driver.JobState{}
	for _, r := range rows {
		states[r.id] = driver.JobState(r.st)
	}
	for _, id := range ids {
		if _, ok := states[id]; !ok {
			return nil, &driver.MissingDependencyError{ID: id}
		}
	}
	return states, nil
}

// linkParents records the unfinished parents of a waiting job; a parent that
// already failed or was cancelled settles the child at once. Only a child
// left with no unfinished parent is released here: the release reads every
// waiting job, which a child still waiting need not pay.
func (e executor) linkParents(ctx context.Context, j *driver.Job, parents map[int64]driver.JobState) error {
	live := []int64{}
	for id, st := range parents {
		if !st.Finished() {
			live = append(live, id)
		}
	}
	if _, err := e.wexec(ctx, "JobDepInsert", sql.Named("job", j.ID), sql.Named("parents", jsonText(live))); err != nil {
		return err
	}
	for id, st := range parents {
		if st == driver.StateFailed || st == driver.StateCancelled {
			if err := depgraph.SettleDependent(ctx, e, j.ID, id, st); err != nil {
				return err
			}
		}
	}
	if len(live) > 0 {
		return nil // it waits for them
	}
	_, err := e.ReleaseWaiting(ctx)
	return err
}
