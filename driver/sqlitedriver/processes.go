package sqlitedriver

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// ProcessBeat records p and expires the stale rows in one transaction of
// the writer.
func (e executor) ProcessBeat(ctx context.Context, p *driver.Process, stale time.Duration) error {
	queues, err := json.Marshal(p.Queues)
	if err != nil {
		return err
	}
	if p.Queues == nil {
		queues = []byte("[]")
	}
	_, now, _ := nowArgs()
	if _, err := e.wexec(ctx, "ProcessExpire", now, sql.Named("stale", stale.Microseconds())); err != nil {
		return err
	}
	_, err = e.wexec(ctx, "ProcessBeat", sql.Named("id", p.ID), sql.Named("host", p.Host), sql.Named("pid", p.PID),
		sql.Named("version", p.Version), sql.Named("queues", string(queues)),
		sql.Named("started_at", micros(p.StartedAt)), now)
	return err
}

func (e executor) ProcessDelete(ctx context.Context, id string) error {
	_, err := e.wexec(ctx, "ProcessDelete", sql.Named("id", id))
	return err
}

func (e executor) ProcessList(ctx context.Context, stale time.Duration) ([]*driver.Process, error) {
	_, now, _ := nowArgs()
	return collect(func(s scanner) (*driver.Process, error) {
		p := &driver.Process{}
		var queues string
		var started, beat storedMicros
		if err := s.Scan(&p.ID, &p.Host, &p.PID, &p.Version, &queues, &started, &beat); err != nil {
			return nil, err
		}
		p.StartedAt, p.HeartbeatAt = started.time(), beat.time()
		return p, json.Unmarshal([]byte(queues), &p.Queues)
	})(e.rquery(ctx, "ProcessList", now, sql.Named("stale", stale.Microseconds())))
}
