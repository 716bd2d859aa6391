package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// Remote is Skiplock worked by other processes: Start runs Procs worker
// processes (`skiplock bench-worker`), through Servers `skiplock serve`
// processes when HTTP; inserts and counts go through the bench's own
// client, which works nothing.
type Remote struct {
	*Skiplock
	o       Options
	dbURL   string
	servers []*serverProc
	group   *procGroup
	// claims are the HTTP workers' claim times, once they stopped.
	claims *ClaimHist
	// poolFull counts by pool the servers' lines saying a pool was full;
	// lastPoolFull is the last such line of one of them.
	poolFull     map[string]int
	lastPoolFull string
}

// NewRemote returns Skiplock worked by o.Procs processes of o.Exe on the
// database at dbURL; sys inserts and counts.
func NewRemote(sys *Skiplock, o Options, dbURL string) *Remote {
	return &Remote{Skiplock: sys, o: o, dbURL: dbURL}
}

func (r *Remote) Name() string {
	if r.o.Mode == "http" {
		return "skiplock-http"
	}
	return fmt.Sprintf("skiplock×%d", r.o.Procs)
}

// WorkerArgs are the arguments of worker process i (from 0) working over
// HTTP at serverURL, or through the library when serverURL is empty.
func (o Options) WorkerArgs(i int, serverURL, dbURL string) []string {
	args := []string{"bench-worker", "--queue", Queue}
	if serverURL != "" {
		args = append(args, "--server", serverURL, "--claim-max", strconv.Itoa(o.ClaimMax),
			"--loops", strconv.Itoa(o.Loops), "--worker-id", fmt.Sprintf("bench-%d", i+1))
		if o.H2C {
			args = append(args, "--h2c")
		}
		if o.FullJobs {
			args = append(args, "--full-jobs")
		}
		if o.SeparateReports {
			args = append(args, "--separate-reports")
		}
		return args
	}
	args = append(args, "--database-url", dbURL)
	if o.Workers > 0 {
		args = append(args, "--workers", strconv.Itoa(o.Workers))
	}
	if o.FetchCooldown > 0 {
		args = append(args, "--fetch-cooldown", o.FetchCooldown.String())
	}
	if o.FetchPollInterval > 0 {
		args = append(args, "--poll-interval", o.FetchPollInterval.String())
	}
	if o.CompleterBatch > 0 {
		args = append(args, "--completer-batch", strconv.Itoa(o.CompleterBatch))
	}
	return append(args, poolArgs(o.Pools)...)
}

// ServeAppPrefix prefixes the application_name of the servers' sessions
// (the bench's schema) so that they are counted apart.
const ServeAppPrefix = "serve_"

// Start runs the servers (HTTP) and the worker processes: worker process
// i works through server i mod Servers.
func (r *Remote) Start(ctx context.Context, onWork func(int64)) error {
	if r.o.Mode == "http" {
		url := strings.Replace(r.dbURL, "application_name=", "application_name="+ServeAppPrefix, 1)
		for range max(r.o.Servers, 1) {
			s, err := startServer(ctx, r.o.Exe, url, poolArgs(r.o.Pools))
			if err != nil {
				r.stopServers()
				return err
			}
			r.servers = append(r.servers, s)
		}
	}
	args := make([][]string, r.o.Procs)
	for i := range args {
		serverURL := ""
		if len(r.servers) > 0 {
			serverURL = r.servers[i%len(r.servers)].URL
		}
		args[i] = r.o.WorkerArgs(i, serverURL, r.dbURL)
	}
	g, err := startProcs(r.o.Exe, args, nil, func(n int64) {
		for range n {
			onWork(0)
		}
	})
	if err != nil {
		r.stopServers()
		return err
	}
	r.group = g
	return nil
}

// Stop ends the worker processes, then the servers, and answers what went
// wrong in them.
func (r *Remote) Stop(ctx context.Context) error {
	var errs []error
	if r.group != nil {
		if err := r.group.stop(); err != nil {
			errs = append(errs, err)
			for i, s := range r.servers {
				errs = append(errs, fmt.Errorf("server %d log: %s", i+1, s.tail.String()))
			}
		}
		r.claims = &r.group.claims
		r.group = nil
	}
	errs = append(errs, r.stopServers())
	return errors.Join(errs...)
}

// stopServers stops the servers, keeping what they said of their pools.
func (r *Remote) stopServers() error {
	var errs []error
	for _, s := range r.servers {
		errs = append(errs, s.stop())
		n, last := s.poolWarnings()
		if r.poolFull == nil {
			r.poolFull = map[string]int{}
		}
		for pool, c := range n {
			r.poolFull[pool] += c
		}
		if last != "" {
			r.lastPoolFull = last
		}
	}
	r.servers = nil
	return errors.Join(errs...)
}

// extra answers the result's fields of the HTTP workers' claims and of the
// servers' pools: claims and claim_p99_ms (of the claims that answered
// jobs), servers, pool_full_logs (by pool, e.g. claims:3,maintenance:1).
func (r *Remote) extra() []string {
	if r.o.Mode != "http" {
		return nil
	}
	out := []string{fmt.Sprintf("servers=%d", max(r.o.Servers, 1))}
	if r.claims != nil && r.claims.Count() > 0 {
		out = append(out, fmt.Sprintf("claims=%d claim_p99_ms=%.2f", r.claims.Count(), ms(r.claims.Percentile(0.99))))
	}
	logs := []string{}
	for _, pool := range slices.Sorted(maps.Keys(r.poolFull)) {
		logs = append(logs, fmt.Sprintf("%s:%d", pool, r.poolFull[pool]))
	}
	if len(logs) == 0 {
		logs = append(logs, "0")
	}
	return append(out, "pool_full_logs="+strings.Join(logs, ","))
}

// LibWorkerConfig is a library worker process's settings (bench-worker
// with --database-url).
type LibWorkerConfig struct {
	DatabaseURL       string
	Pools             pgdriver.Pools
	Workers           int
	FetchCooldown     time.Duration
	FetchPollInterval time.Duration
	CompleterBatch    int
}

// RunLibWorker works the bench queue through the library until ctx ends,
// counting finished jobs in worked; ready, when set, is called once the
// client has started.
func RunLibWorker(ctx context.Context, c LibWorkerConfig, worked *atomic.Int64, ready func()) error {
	db, err := dbopen.OpenWith(ctx, c.DatabaseURL, dbopen.Options{Pools: c.Pools})
	if err != nil {
		return err
	}
	defer db.Close()
	sys, err := NewSkiplock(db.Driver, skiplock.Config{FetchCooldown: c.FetchCooldown,
		FetchPollInterval: c.FetchPollInterval, CompleterBatchSize: c.CompleterBatch}, c.Workers)
	if err != nil {
		return err
	}
	if err := sys.Start(ctx, func(int64) { worked.Add(1) }); err != nil {
		return err
	}
	if ready != nil {
		ready()
	}
	<-ctx.Done()
	return sys.client.Stop(context.WithoutCancel(ctx))
}
