package sqlitedriver

import (
	"context"
	"database/sql"
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) JobChangedSince(ctx context.Context, since time.Time, limit int) ([]*driver.Job, error) {
	return scanJobs(e.rquery(ctx, "JobChangedSince", sql.Named("since", since.UnixMicro()), sql.Named("limit", limit)))
}

func (e executor) JobStats(ctx context.Context) (*driver.Stats, error) {
	st := &driver.Stats{ByStateKind: map[driver.JobState]map[string]int64{},
		FinishedLastMinute: map[driver.JobState]int64{}, FinishedLastHour: map[driver.JobState]int64{}}
	type count struct {
		state, kind string
		n           int64
	}
	counts, err := collect(func(s scanner) (count, error) {
		var c count
		return c, s.Scan(&c.state, &c.kind, &c.n)
	})(e.rquery(ctx, "JobStatsCounts"))
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		s := driver.JobState(c.state)
		if st.ByStateKind[s] == nil {
			st.ByStateKind[s] = map[string]int64{}
		}
		st.ByStateKind[s][c.kind] += c.n
	}
	_, now, _ := nowArgs()
	type finished struct {
		state        string
		minute, hour int64
	}
	fs, err := collect(func(s scanner) (finished, error) {
		var f finished
		return f, s.Scan(&f.state, &f.minute, &f.hour)
	})(e.rquery(ctx, "JobStatsFinished", now))
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		st.FinishedLastMinute[driver.JobState(f.state)] = f.minute
		st.FinishedLastHour[driver.JobState(f.state)] = f.hour
	}
	return st, nil
}

func scanToken(r scanner) (*driver.Token, error) {
	var t driver.Token
	var created storedMicros
	err := r.Scan(&t.ID, &t.Name, &t.Hash, &t.Role, &t.Tenant, &created)
	t.CreatedAt = created.time()
	return &t, err
}

func (e executor) TokenCreate(ctx context.Context, t *driver.Token) (*driver.Token, error) {
	_, now, _ := nowArgs()
	out, err := collect(scanToken)(e.wquery(ctx, "TokenCreate", sql.Named("name", t.Name), sql.Named("hash", t.Hash),
		sql.Named("role", t.Role), sql.Named("tenant", t.Tenant), now))
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (e executor) TokenByHash(ctx context.Context, hash string) (*driver.Token, error) {
	out, err := collect(scanToken)(e.rquery(ctx, "TokenByHash", sql.Named("hash", hash)))
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, driver.ErrNotFound
	}
	return out[0], nil
}

func (e executor) TokenList(ctx context.Context) ([]*driver.Token, error) {
	return collect(scanToken)(e.rquery(ctx, "TokenList"))
}

func (e executor) TokenDelete(ctx context.Context, id int64) error {
	res, err := e.wexec(ctx, "TokenDelete", sql.Named("id", id))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

func (e executor) TokenCount(ctx context.Context) (int, error) {
	var n int
	err := e.r.QueryRowContext(ctx, q("TokenCount")).Scan(&n)
	return n, err
}

func (e executor) JobActivity(ctx context.Context, since time.Time, bucket time.Duration) (*driver.Activity, error) {
	a := &driver.Activity{}
	var err error
	a.Finished, err = collect(func(s scanner) (driver.ActivityCount, error) {
		var c driver.ActivityCount
		var state string
		err := s.Scan(&c.Bucket, &state, &c.N)
		c.State = driver.JobState(state)
		return c, err
	})(e.rquery(ctx, "JobActivityFinished", sql.Named("since", since.UnixMicro()),
		sql.Named("bucket_micros", max(bucket.Microseconds(), 1))))
	if err != nil {
		return nil, err
	}
	if err := e.r.QueryRowContext(ctx, q("JobActivityRunning")).Scan(&a.Running, &a.RunningWorkers); err != nil {
		return nil, err
	}
	return a, nil
}
