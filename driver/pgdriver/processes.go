package pgdriver

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

var (
	processBeat   = bind[processBeatArgs]("ProcessBeat")
	processDelete = bind[processIDArg]("ProcessDelete")
	processList   = bind[staleArg]("ProcessList")
)

type (
	processBeatArgs struct {
		ID        string    `sql:"id"`
		Host      string    `sql:"host"`
		PID       int       `sql:"pid"`
		Version   string    `sql:"version"`
		Queues    []string  `sql:"queues"`
		StartedAt time.Time `sql:"started_at"`
		Stale     float64   `sql:"stale"`
	}
	processIDArg struct {
		ID string `sql:"id"`
	}
	staleArg struct {
		Stale float64 `sql:"stale"`
	}
)

func (e executor) ProcessBeat(ctx context.Context, p *driver.Process, stale time.Duration) error {
	queues := p.Queues
	if queues == nil {
		queues = []string{}
	}
	_, err := e.q.Exec(ctx, processBeat.SQL, processBeat.Args(processBeatArgs{ID: p.ID, Host: p.Host, PID: p.PID,
		Version: p.Version, Queues: queues, StartedAt: p.StartedAt, Stale: stale.Seconds()})...)
	return err
}

func (e executor) ProcessDelete(ctx context.Context, id string) error {
	_, err := e.q.Exec(ctx, processDelete.SQL, processDelete.Args(processIDArg{id})...)
	return err
}

func (e executor) ProcessList(ctx context.Context, stale time.Duration) ([]*driver.Process, error) {
	rows, err := e.q.Query(ctx, processList.SQL, processList.Args(staleArg{stale.Seconds()})...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*driver.Process
	for rows.Next() {
		p := &driver.Process{}
		if err := rows.Scan(&p.ID, &p.Host, &p.PID, &p.Version, &p.Queues, scanTime(&p.StartedAt), scanTime(&p.HeartbeatAt)); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
