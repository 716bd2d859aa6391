package pgdriver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/skiplock/skiplock/driver"
)

// JobRestore inserts the jobs in one statement: they travel as one JSON
// array that the database reads into rows of the job table's type, so a
// batch costs one round trip whatever its size.
func (e executor) JobRestore(ctx context.Context, jobs []*driver.Job, into driver.RestoreTarget) ([]int64, error) {
	if !into.Valid() {
		return nil, fmt.Errorf("restore: unknown target %q", into)
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	doc, err := json.Marshal(jobs)
	if err != nil {
		return nil, fmt.Errorf("restore: encode jobs: %w", err)
	}
	maxID := slices.MaxFunc(jobs, func(a, b *driver.Job) int { return cmp.Compare(a.ID, b.ID) }).ID
	var ids []int64
	err = e.inTx(ctx, func(tx executor) error {
		var queues []string
		var err error
		if into == driver.RestoreQueue {
			ids, queues, err = tx.restoreQueue(ctx, string(doc))
		} else {
			ids, err = tx.restoreArchive(ctx, string(doc))
		}
		if err != nil || len(ids) == 0 {
			return err
		}
		if _, err := tx.q.Exec(ctx, jobRestoreSequence.SQL, jobRestoreSequence.Args(restoreSequenceArgs{maxID})...); err != nil {
			return fmt.Errorf("restore: id sequence: %w", err)
		}
		if len(queues) == 0 {
			return nil
		}
		return tx.QueueNotify(ctx, queues)
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

func (e executor) restoreQueue(ctx context.Context, doc string) ([]int64, []string, error) {
	rows, err := e.q.Query(ctx, jobRestoreQueue.SQL, jobRestoreQueue.Args(restoreArgs{doc})...)
	if err != nil {
		return nil, nil, fmt.Errorf("restore into the queue: %w", err)
	}
	defer rows.Close()
	var ids []int64
	var queues []string
	for rows.Next() {
		var id int64
		var queue string
		if err := rows.Scan(&id, &queue); err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
		if !slices.Contains(queues, queue) {
			queues = append(queues, queue)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("restore into the queue: %w", err)
	}
	return ids, queues, nil
}

func (e executor) restoreArchive(ctx context.Context, doc string) ([]int64, error) {
	rows, err := e.q.Query(ctx, jobRestoreArchive.SQL, jobRestoreArchive.Args(restoreArgs{doc})...)
	if err != nil {
		return nil, fmt.Errorf("restore into the archive: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("restore into the archive: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

var (
	jobRestoreQueue    = bind[restoreArgs]("JobRestoreQueue")
	jobRestoreArchive  = bind[restoreArgs]("JobRestoreArchive")
	jobRestoreSequence = bind[restoreSequenceArgs]("JobRestoreSequence")
)

type restoreArgs struct {
	Jobs string `sql:"jobs"`
}

type restoreSequenceArgs struct {
	MaxID int64 `sql:"max_id"`
}
