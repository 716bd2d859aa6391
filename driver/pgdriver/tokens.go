package pgdriver

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) JobChangedSince(ctx context.Context, since time.Time, limit int) ([]*driver.Job, error) {
	return scanJobs(e.q.Query(ctx, jobChangedSince.SQL, jobChangedSince.Args(changedArgs{since, limit})...))
}

func (e executor) JobStats(ctx context.Context) (*driver.Stats, error) {
	st := &driver.Stats{ByStateKind: map[driver.JobState]map[string]int64{},
		FinishedLastMinute: map[driver.JobState]int64{}, FinishedLastHour: map[driver.JobState]int64{}}
	rows, err := e.q.Query(ctx, q("JobStatsCounts"))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var state, kind string
		var n int64
		if err := rows.Scan(&state, &kind, &n); err != nil {
			rows.Close()
			return nil, err
		}
		s := driver.JobState(state)
		if st.ByStateKind[s] == nil {
			st.ByStateKind[s] = map[string]int64{}
		}
		st.ByStateKind[s][kind] += n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = e.q.Query(ctx, q("JobStatsFinished"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var minute, hour int64
		if err := rows.Scan(&state, &minute, &hour); err != nil {
			return nil, err
		}
		st.FinishedLastMinute[driver.JobState(state)] = minute
		st.FinishedLastHour[driver.JobState(state)] = hour
	}
	return st, rows.Err()
}

func scanToken(r pgx.CollectableRow) (*driver.Token, error) {
	var t driver.Token
	err := r.Scan(&t.ID, &t.Name, &t.Hash, &t.Role, &t.Tenant, scanTime(&t.CreatedAt))
	return &t, err
}

func (e executor) TokenCreate(ctx context.Context, t *driver.Token) (*driver.Token, error) {
	rows, err := e.q.Query(ctx, tokenCreate.SQL, tokenCreate.Args(tokenArgs{t.Name, t.Hash, t.Role, t.Tenant})...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectExactlyOneRow(rows, scanToken)
}

func (e executor) TokenByHash(ctx context.Context, hash string) (*driver.Token, error) {
	rows, err := e.q.Query(ctx, tokenByHash.SQL, tokenByHash.Args(hashArg{hash})...)
	if err != nil {
		return nil, err
	}
	t, err := pgx.CollectExactlyOneRow(rows, scanToken)
	if err == pgx.ErrNoRows {
		return nil, driver.ErrNotFound
	}
	return t, err
}

func (e executor) TokenList(ctx context.Context) ([]*driver.Token, error) {
	rows, err := e.q.Query(ctx, q("TokenList"))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanToken)
}

func (e executor) TokenDelete(ctx context.Context, id int64) error {
	tag, err := e.q.Exec(ctx, tokenDelete.SQL, tokenDelete.Args(idArg{id})...)
	if err == nil && tag.RowsAffected() == 0 {
		return driver.ErrNotFound
	}
	return err
}

func (e executor) TokenCount(ctx context.Context) (int, error) {
	var n int
	err := e.q.QueryRow(ctx, q("TokenCount")).Scan(&n)
	return n, err
}

// JobActivity sends its two statements as one pipeline (see QueueList).
func (e executor) JobActivity(ctx context.Context, since time.Time, bucket time.Duration) (*driver.Activity, error) {
	a := &driver.Activity{}
	b := &pgx.Batch{}
	b.Queue(jobActivityFinished.SQL, jobActivityFinished.Args(activityArgs{since, bucket.Seconds()})...).Query(func(rows pgx.Rows) error {
		var err error
		a.Finished, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.ActivityCount, error) {
			var c driver.ActivityCount
			var state string
			err := r.Scan(&c.Bucket, &state, &c.N)
			c.State = driver.JobState(state)
			return c, err
		})
		return err
	})
	b.Queue(q("JobActivityRunning")).QueryRow(func(row pgx.Row) error {
		return row.Scan(&a.Running, &a.RunningWorkers)
	})
	if err := e.q.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return a, nil
}

var (
	jobChangedSince     = bind[changedArgs]("JobChangedSince")
	tokenCreate         = bind[tokenArgs]("TokenCreate")
	tokenByHash         = bind[hashArg]("TokenByHash")
	tokenDelete         = bind[idArg]("TokenDelete")
	jobActivityFinished = bind[activityArgs]("JobActivityFinished")
)

type changedArgs struct {
	Since time.Time `sql:"since"`
	Limit int       `sql:"limit"`
}

type tokenArgs struct {
	Name   string `sql:"name"`
	Hash   string `sql:"hash"`
	Role   string `sql:"role"`
	Tenant string `sql:"tenant"`
}

type hashArg struct {
	Hash string `sql:"hash"`
}

type activityArgs struct {
	Since  time.Time `sql:"since"`
	Bucket float64   `sql:"bucket"` // seconds
}
