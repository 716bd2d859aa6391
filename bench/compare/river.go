package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// noopArgs is River's bench job: its payload carries the enqueue time.
type noopArgs struct {
	T int64 `json:"t,omitempty"`
}

func (noopArgs) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	onWork *atomic.Pointer[func(int64)]
}

func (w *noopWorker) Work(_ context.Context, j *river.Job[noopArgs]) error {
	if f := w.onWork.Load(); f != nil {
		(*f)(j.Args.T)
	}
	return nil
}

// riverSystem is River as a bench.System, on a pool whose search_path is a
// schema of its own.
type riverSystem struct {
	name   string
	pool   *pgxpool.Pool
	config river.Config
	client *river.Client[pgx.Tx]
	onWork atomic.Pointer[func(int64)]
}

// riverSettings are the knobs compared; zero takes River's defaults.
type riverSettings struct {
	MaxWorkers                   int
	FetchCooldown, FetchInterval time.Duration
}

func newRiver(ctx context.Context, name string, pool *pgxpool.Pool, s riverSettings) (*riverSystem, error) {
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return nil, err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("river migrate: %w", err)
	}
	r := &riverSystem{name: name, pool: pool}
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{onWork: &r.onWork})
	r.config = river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: s.MaxWorkers}},
		Workers:           workers,
		FetchCooldown:     s.FetchCooldown,
		FetchPollInterval: s.FetchInterval,
		Logger:            slog.New(slog.DiscardHandler),
	}
	return r, r.renew()
}

func (r *riverSystem) renew() error {
	cfg := r.config
	c, err := river.NewClient(riverpgxv5.New(r.pool), &cfg)
	if err != nil {
		return err
	}
	r.client = c
	return nil
}

func (r *riverSystem) Name() string { return r.name }

func (r *riverSystem) Insert(ctx context.Context, n int, stamp time.Time) error {
	args := noopArgs{}
	if !stamp.IsZero() {
		args.T = stamp.UnixNano()
	}
	if n == 1 {
		_, err := r.client.Insert(ctx, args, nil)
		return err
	}
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i].Args = args
	}
	_, err := r.client.InsertManyFast(ctx, params)
	return err
}

func (r *riverSystem) Start(ctx context.Context, onWork func(int64)) error {
	r.onWork.Store(&onWork)
	return r.client.Start(ctx)
}

func (r *riverSystem) Stop(ctx context.Context) error {
	err := r.client.Stop(ctx)
	if rerr := r.renew(); err == nil {
		err = rerr
	}
	return err
}

func (r *riverSystem) Live(ctx context.Context) (int64, error) {
	var n int64
	err := r.pool.QueryRow(ctx,
		`SELECT count(*) FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&n)
	return n, err
}
