package skiplock

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Worker works jobs of one kind, the kind of T.
type Worker[T JobArgs] interface {
	Work(ctx context.Context, job *Job[T]) error
}

// WorkFunc turns a function into a Worker.
type WorkFunc[T JobArgs] func(ctx context.Context, job *Job[T]) error

func (f WorkFunc[T]) Work(ctx context.Context, job *Job[T]) error { return f(ctx, job) }

// WorkerOpts tune a kind; zero values take the kind's contract, then the
// client's defaults.
type WorkerOpts struct {
	// Lease is how long a claim holds the job between heartbeats.
	Lease time.Duration
	// Timeout cancels the job's context after this long (0: none).
	Timeout time.Duration
	// Backoff answers the wait before retry number `retry` (0 first).
	Backoff func(retry int) time.Duration
}

// Workers is the registry of workers by kind.
type Workers struct {
	byKind map[string]*registeredWorker
}

type registeredWorker struct {
	kind string
	opts WorkerOpts
	work func(ctx context.Context, row *JobRow, run *runningJob) error
}

// NewWorkers returns an empty registry.
func NewWorkers() *Workers { return &Workers{byKind: map[string]*registeredWorker{}} }

// AddWorker registers w for the kind of T; a second worker for a kind is an
// error.
func AddWorker[T JobArgs](ws *Workers, w Worker[T], opts ...WorkerOpts) error {
	var zero T
	kind := zero.Kind()
	if kind == "" {
		return fmt.Errorf("add worker %T: Kind() of the zero value is empty", w)
	}
	if _, dup := ws.byKind[kind]; dup {
		return fmt.Errorf("add worker %T: a worker for kind %q is already registered", w, kind)
	}
	rw := newRegisteredWorker(kind, w)
	if len(opts) > 0 {
		rw.opts = opts[0]
	}
	ws.byKind[kind] = rw
	return nil
}

func newRegisteredWorker[T JobArgs](kind string, w Worker[T]) *registeredWorker {
	return &registeredWorker{kind: kind, work: func(ctx context.Context, row *JobRow, run *runningJob) error {
		job := &Job[T]{JobRow: row, run: run}
		if err := json.Unmarshal(row.Payload, &job.Args); err != nil {
			return Permanent(fmt.Errorf("decode payload of kind %q: %w", kind, err))
		}
		return w.Work(ctx, job)
	}}
}

// MustAddWorker is AddWorker that panics on error, for program set-up.
func MustAddWorker[T JobArgs](ws *Workers, w Worker[T], opts ...WorkerOpts) {
	if err := AddWorker(ws, w, opts...); err != nil {
		panic(err)
	}
}

// DefaultBackoff waits 60 s × 3^retry × jitter(0.8–1.2), at most a day.
func DefaultBackoff(retry int) time.Duration {
	base := 60 * math.Pow(3, float64(retry))
	d := time.Duration(base * (0.8 + 0.4*rand.Float64()) * float64(time.Second))
	if d > 24*time.Hour || d <= 0 {
		d = 24 * time.Hour
	}
	return d
}
