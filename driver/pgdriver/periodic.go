package pgdriver

import (
	"context"
	"time"
)

func (e executor) PeriodicLastTicks(ctx context.Context) (map[string]time.Time, error) {
	rows, err := e.q.Query(ctx, q("PeriodicLastTicks"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var name string
		var tick time.Time
		if err := rows.Scan(&name, scanTime(&tick)); err != nil {
			return nil, err
		}
		out[name] = tick
	}
	return out, rows.Err()
}

func (e executor) PeriodicAdvance(ctx context.Context, name string, tick time.Time) error {
	_, err := e.q.Exec(ctx, periodicAdvance.SQL, periodicAdvance.Args(periodicArgs{name, tick})...)
	return err
}

var periodicAdvance = bind[periodicArgs]("PeriodicAdvance")

type periodicArgs struct {
	Name     string    `sql:"name"`
	LastTick time.Time `sql:"last_tick"`
}
