// Package drivertest is the conformance suite every Skiplock driver passes:
// each driver-level behaviour stated once, run against PostgreSQL (from
// pgdriver's tests) and SQLite (from sqlitedriver's).
package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
)

// Run runs every behaviour as a parallel subtest; open answers a new,
// migrated, empty database for each, and nextID makes such a database give
// the next job it inserts the id asked for (the cases on ids past 2³¹).
func Run(t *testing.T, open func(t *testing.T) driver.Driver, nextID func(t *testing.T, d driver.Driver, id int64)) {
	run(t, cases, open, nextID)
}

// RunNamed runs the behaviours named (all of them when names is nil), as
// Run does; a name no behaviour has fails the test, so that a renamed
// behaviour is not silently left out.
func RunNamed(t *testing.T, names []string, open func(t *testing.T) driver.Driver, nextID func(t *testing.T, d driver.Driver, id int64)) {
	if names == nil {
		run(t, cases, open, nextID)
		return
	}
	byName := map[string]testCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	var some []testCase
	for _, n := range names {
		c, ok := byName[n]
		if !ok {
			t.Fatalf("drivertest: no behaviour named %q", n)
		}
		some = append(some, c)
	}
	run(t, some, open, nextID)
}

func run(t *testing.T, cases []testCase, open func(t *testing.T) driver.Driver, nextID func(t *testing.T, d driver.Driver, id int64)) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			d := open(t)
			c.fn(&env{t: t, d: d, ctx: ctx, nextID: func(id int64) { nextID(t, d, id) }})
		})
	}
}

type testCase struct {
	name string
	fn   func(e *env)
}

// cases lists the behaviours; each file of the package adds its own.
var cases []testCase

func add(name string, fn func(e *env)) bool {
	cases = append(cases, testCase{name, fn})
	return true
}

// env is what a behaviour needs: the driver and a context.
type env struct {
	t      *testing.T
	d      driver.Driver
	ctx    context.Context
	nextID func(id int64)
}

// lease is the lease of claims unless a test needs it to expire.
const lease = 30 * time.Second

// job answers insert parameters with the logic's defaults applied.
func job(kind string) *driver.InsertParams {
	return &driver.InsertParams{Kind: kind, Queue: "default", Priority: 5, MaxRetries: 3}
}

func (e *env) insertMany(ps ...*driver.InsertParams) []driver.InsertResult {
	e.t.Helper()
	res, err := e.d.JobInsertMany(e.ctx, ps)
	if err != nil {
		e.t.Fatalf("JobInsertMany: %v", err)
	}
	if len(res) != len(ps) {
		e.t.Fatalf("JobInsertMany: %d results for %d jobs", len(res), len(ps))
	}
	return res
}

func (e *env) insert(p *driver.InsertParams) *driver.Job {
	e.t.Helper()
	return e.insertMany(p)[0].Job
}

func (e *env) get(id int64) *driver.Job {
	e.t.Helper()
	j, err := e.d.JobGet(e.ctx, id)
	if err != nil {
		e.t.Fatalf("JobGet(%d): %v", id, err)
	}
	return j
}

func (e *env) claim(p driver.ClaimParams) []*driver.Job {
	e.t.Helper()
	if p.Queue == "" {
		p.Queue = "default"
	}
	if p.WorkerID == "" {
		p.WorkerID = "w1"
	}
	if p.Max == 0 {
		p.Max = 100
	}
	if p.DefaultLease == 0 {
		p.DefaultLease = lease
	}
	jobs, err := e.d.JobClaim(e.ctx, p)
	if err != nil {
		e.t.Fatalf("JobClaim: %v", err)
	}
	return jobs
}

// claimID claims one job of j's queue and kind as worker; it must be j.
func (e *env) claimID(j *driver.Job, worker string, l time.Duration) *driver.Job {
	e.t.Helper()
	got := e.claim(driver.ClaimParams{Queue: j.Queue, WorkerID: worker, DefaultLease: l, Max: 1,
		Kinds: []string{j.Kind}})
	if len(got) != 1 || got[0].ID != j.ID {
		e.t.Fatalf("claim: got %v, want job %d", ids(got), j.ID)
	}
	return got[0]
}

// held names a held job as a client's worker does: with its queue.
func held(j *driver.Job) driver.HeldJob {
	return driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: j.WorkerID, Queue: j.Queue}
}

func (e *env) complete(j *driver.Job, result string) {
	e.t.Helper()
	p := driver.CompleteParams{HeldJob: held(j)}
	if result != "" {
		p.Result = json.RawMessage(result)
	}
	done, err := e.d.JobCompleteMany(e.ctx, []driver.CompleteParams{p})
	if err != nil || len(done) != 1 || done[0].ID != j.ID {
		e.t.Fatalf("complete job %d: done %v, err %v", j.ID, done, err)
	}
}

// failFinal fails a held job for good.
func (e *env) failFinal(j *driver.Job, msg string) *driver.Job {
	e.t.Helper()
	out, err := outcome.FailJob(e.ctx, e.d, driver.FailParams{HeldJob: held(j), Error: attemptError(j, msg, false)})
	if err != nil {
		e.t.Fatalf("fail job %d: %v", j.ID, err)
	}
	return out
}

func attemptError(j *driver.Job, msg string, retryable bool) driver.AttemptError {
	return driver.AttemptError{Attempt: j.Attempt, Type: "test", Message: msg,
		At: time.Now().UTC().Truncate(time.Millisecond), Retryable: retryable}
}

func (e *env) wantState(id int64, want driver.JobState) *driver.Job {
	e.t.Helper()
	j := e.get(id)
	if j.State != want {
		e.t.Fatalf("job %d: state %s, want %s", id, j.State, want)
	}
	return j
}

func (e *env) wantErr(err, want error, what string) {
	e.t.Helper()
	if !errors.Is(err, want) {
		e.t.Fatalf("%s: err %v, want %v", what, err, want)
	}
}

func ids(jobs []*driver.Job) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func (e *env) wantIDs(got []*driver.Job, want ...int64) {
	e.t.Helper()
	if g := ids(got); !slices.Equal(g, want) {
		e.t.Fatalf("jobs %v, want %v", g, want)
	}
}

// jsonEqual compares JSON documents by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func near(a, b time.Time, within time.Duration) bool {
	d := a.Sub(b)
	return d < within && d > -within
}
