package sqlitedriver

import (
	"context"
	"database/sql"
	"time"
)

func (e executor) PeriodicLastTicks(ctx context.Context) (map[string]time.Time, error) {
	rows, err := e.rquery(ctx, "PeriodicLastTicks")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var name string
		var tick storedMicros
		if err := rows.Scan(&name, &tick); err != nil {
			return nil, err
		}
		out[name] = tick.time()
	}
	return out, rows.Err()
}

func (e executor) PeriodicAdvance(ctx context.Context, name string, tick time.Time) error {
	_, now, _ := nowArgs()
	_, err := e.wexec(ctx, "PeriodicAdvance", sql.Named("name", name), sql.Named("tick", micros(tick)), now)
	return err
}
