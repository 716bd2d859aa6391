package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver/pgdriver"
)

// sessionSampleEvery is how often watchSessions counts the run's sessions.
const sessionSampleEvery = 200 * time.Millisecond

// watchSessions counts, while the run lasts, the database sessions of the
// bench's processes (their application_name is the bench's schema, or
// ServeAppPrefix and the schema for its servers) on PostgreSQL: client
// backends only, since a VACUUM's parallel workers carry their leader's
// application_name but are the server's own processes, not connections
// (they count against max_worker_processes, not max_connections); the
// answered function stops it and answers the result's extra fields:
// claim_p99_ms of the bench's own claims (when it claimed), sessions_max,
// server_sessions_max (when it ran servers), and the budget when pools are
// set.
func (d *Database) watchSessions(ctx context.Context, pools pgdriver.Pools) func(*claimTimer) []string {
	if d.Kind != "postgres" {
		return func(*claimTimer) []string { return nil }
	}
	conn, err := connectAdmin(ctx, d.adminURL)
	if err != nil {
		return func(*claimTimer) []string { return []string{"sessions_max=error:" + err.Error()} }
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	peak, servers := 0, 0
	wg.Go(func() {
		t := time.NewTicker(sessionSampleEvery)
		defer t.Stop()
		for {
			var n, s int
			if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE application_name = $2)
				FROM pg_stat_activity WHERE application_name IN ($1, $2) AND backend_type = 'client backend'`, d.schema, ServeAppPrefix+d.schema).Scan(&n, &s); err == nil {
				peak, servers = max(peak, n), max(servers, s)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return func(timer *claimTimer) []string {
		cancel()
		wg.Wait()
		conn.Close(context.Background())
		out := []string{}
		if timer.count() > 0 {
			out = append(out, fmt.Sprintf("claim_p99_ms=%.2f", ms(timer.percentile(0.99))))
		}
		out = append(out, fmt.Sprintf("sessions_max=%d", peak))
		if servers > 0 {
			out = append(out, fmt.Sprintf("server_sessions_max=%d", servers))
		}
		if pools.Budget > 0 {
			out = append(out, fmt.Sprintf("budget=%d", pools.Budget))
		}
		return out
	}
}

// poolArgs are the bench-worker flags that give a worker process p.
func poolArgs(p pgdriver.Pools) []string {
	var args []string
	for _, f := range []struct {
		flag string
		n    int
	}{{"--pool-claims", p.Claims}, {"--pool-completions", p.Completions}, {"--pool-maintenance", p.Maintenance}, {"--pool-budget", p.Budget}} {
		if f.n > 0 {
			args = append(args, f.flag, fmt.Sprint(f.n))
		}
	}
	return args
}
