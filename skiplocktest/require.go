package skiplocktest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
)

// RequireOpts are what an inserted job must also have; zero fields are not
// checked.
type RequireOpts struct {
	Queue      string
	Priority   *int
	MaxRetries *int
	State      skiplock.JobState
	// Tags must all be on the job (it may have more).
	Tags       []string
	Tenant     string
	WorkflowID string
	Stage      string
}

// InsertedJob is a job found by RequireInserted, with its payload decoded.
type InsertedJob[T skiplock.JobArgs] struct {
	*skiplock.JobRow
	Args T
}

// ExpectedJob is one job RequireManyInserted expects: of Args' kind, with
// Opts.
type ExpectedJob struct {
	Args skiplock.JobArgs
	Opts *RequireOpts
}

// RequireInserted asserts that exactly one job of T's kind was inserted
// and that it has opts, and answers it.
func RequireInserted[T skiplock.JobArgs](ctx context.Context, t testing.TB, client *skiplock.Client, opts *RequireOpts) *InsertedJob[T] {
	t.Helper()
	return requireInserted[T](ctx, t, lister{client: client}, opts)
}

// RequireInsertedTx is RequireInserted that looks inside tx, a transaction
// of client's database (pgx.Tx, *sql.Tx): it sees the jobs tx inserted
// before it commits.
func RequireInsertedTx[T skiplock.JobArgs](ctx context.Context, t testing.TB, client *skiplock.Client, tx any, opts *RequireOpts) *InsertedJob[T] {
	t.Helper()
	return requireInserted[T](ctx, t, lister{client: client, tx: tx}, opts)
}

// RequireNotInserted asserts that no job of T's kind with opts was
// inserted (with opts nil: no job of the kind at all).
func RequireNotInserted[T skiplock.JobArgs](ctx context.Context, t testing.TB, client *skiplock.Client, opts *RequireOpts) {
	t.Helper()
	requireNotInserted[T](ctx, t, lister{client: client}, opts)
}

// RequireNotInsertedTx is RequireNotInserted inside tx.
func RequireNotInsertedTx[T skiplock.JobArgs](ctx context.Context, t testing.TB, client *skiplock.Client, tx any, opts *RequireOpts) {
	t.Helper()
	requireNotInserted[T](ctx, t, lister{client: client, tx: tx}, opts)
}

// RequireManyInserted asserts that the jobs of the kinds named in expected
// were inserted exactly in that order (jobs of other kinds are not
// looked at), each with its Opts, and answers them in order.
func RequireManyInserted(ctx context.Context, t testing.TB, client *skiplock.Client, expected []ExpectedJob) []*skiplock.JobRow {
	t.Helper()
	return requireMany(ctx, t, lister{client: client}, expected)
}

// RequireManyInsertedTx is RequireManyInserted inside tx.
func RequireManyInsertedTx(ctx context.Context, t testing.TB, client *skiplock.Client, tx any, expected []ExpectedJob) []*skiplock.JobRow {
	t.Helper()
	return requireMany(ctx, t, lister{client: client, tx: tx}, expected)
}

func requireInserted[T skiplock.JobArgs](ctx context.Context, t testing.TB, l lister, opts *RequireOpts) *InsertedJob[T] {
	t.Helper()
	var zero T
	kind := zero.Kind()
	jobs := l.list(ctx, t, kind)
	switch len(jobs) {
	case 0:
		t.Fatalf("skiplocktest: no job of kind %q was inserted", kind)
	case 1:
	default:
		t.Fatalf("skiplocktest: %d jobs of kind %q were inserted, want 1 (RequireManyInserted checks many)", len(jobs), kind)
	}
	if diff := mismatch(jobs[0], opts); diff != "" {
		t.Fatalf("skiplocktest: job %d of kind %q: %s", jobs[0].ID, kind, diff)
	}
	out := &InsertedJob[T]{JobRow: jobs[0]}
	if err := json.Unmarshal(jobs[0].Payload, &out.Args); err != nil {
		t.Fatalf("skiplocktest: job %d of kind %q: decode payload as %T: %v", jobs[0].ID, kind, out.Args, err)
	}
	return out
}

func requireNotInserted[T skiplock.JobArgs](ctx context.Context, t testing.TB, l lister, opts *RequireOpts) {
	t.Helper()
	var zero T
	kind := zero.Kind()
	for _, j := range l.list(ctx, t, kind) {
		if mismatch(j, opts) == "" {
			t.Fatalf("skiplocktest: job %d of kind %q was inserted, want none%s", j.ID, kind, describe(opts))
		}
	}
}

func requireMany(ctx context.Context, t testing.TB, l lister, expected []ExpectedJob) []*skiplock.JobRow {
	t.Helper()
	var kinds []string
	for i, e := range expected {
		if e.Args == nil {
			t.Fatalf("skiplocktest: expected[%d].Args must not be nil", i)
		}
		kinds = append(kinds, e.Args.Kind())
	}
	var got []*skiplock.JobRow
	for _, j := range l.list(ctx, t, "") {
		if slices.Contains(kinds, j.Kind) {
			got = append(got, j)
		}
	}
	gotKinds := make([]string, len(got))
	for i, j := range got {
		gotKinds[i] = j.Kind
	}
	if !slices.Equal(gotKinds, kinds) {
		t.Fatalf("skiplocktest: inserted jobs of kinds %q, want %q", gotKinds, kinds)
	}
	for i, e := range expected {
		if diff := mismatch(got[i], e.Opts); diff != "" {
			t.Fatalf("skiplocktest: job %d (expected[%d], kind %q): %s", got[i].ID, i, got[i].Kind, diff)
		}
	}
	return got
}

// mismatch answers how job differs from opts, or "".
func mismatch(job *skiplock.JobRow, opts *RequireOpts) string {
	if opts == nil {
		return ""
	}
	var diffs []string
	check := func(field string, want, got any) {
		diffs = append(diffs, fmt.Sprintf("%s is %v, want %v", field, got, want))
	}
	if opts.Queue != "" && job.Queue != opts.Queue {
		check("queue", opts.Queue, job.Queue)
	}
	if opts.Priority != nil && job.Priority != *opts.Priority {
		check("priority", *opts.Priority, job.Priority)
	}
	if opts.MaxRetries != nil && job.MaxRetries != *opts.MaxRetries {
		check("max_retries", *opts.MaxRetries, job.MaxRetries)
	}
	if opts.State != "" && job.State != opts.State {
		check("state", opts.State, job.State)
	}
	for _, tag := range opts.Tags {
		if !slices.Contains(job.Tags, tag) {
			check("tags", fmt.Sprintf("to hold %q", tag), job.Tags)
		}
	}
	if opts.Tenant != "" && job.Tenant != opts.Tenant {
		check("tenant", opts.Tenant, job.Tenant)
	}
	if opts.WorkflowID != "" && job.WorkflowID != opts.WorkflowID {
		check("workflow_id", opts.WorkflowID, job.WorkflowID)
	}
	if opts.Stage != "" && job.Stage != opts.Stage {
		check("stage", opts.Stage, job.Stage)
	}
	return strings.Join(diffs, "; ")
}

func describe(opts *RequireOpts) string {
	if opts == nil {
		return ""
	}
	return fmt.Sprintf(" with %+v", *opts)
}

// lister reads jobs oldest first, through the client or inside a
// transaction.
type lister struct {
	client *skiplock.Client
	tx     any
}

func (l lister) list(ctx context.Context, t testing.TB, kind string) []*skiplock.JobRow {
	t.Helper()
	p := skiplock.JobListParams{Kind: kind, Limit: skiplock.MaxJobListLimit}
	var jobs []*skiplock.JobRow
	var err error
	if l.tx == nil {
		jobs, err = l.client.JobList(ctx, p)
	} else {
		exec, uerr := l.client.Driver().UnwrapTx(l.tx)
		if uerr != nil {
			t.Fatalf("skiplocktest: %v", uerr)
		}
		admin, aerr := driver.As[driver.AdminStore](exec)
		if aerr != nil {
			t.Fatalf("skiplocktest: %v", aerr)
		}
		jobs, err = admin.JobList(ctx, p)
	}
	if err != nil {
		t.Fatalf("skiplocktest: list jobs: %v", err)
	}
	slices.Reverse(jobs)
	return jobs
}
