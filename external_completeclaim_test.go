package skiplock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// bareDriver hides the driver's optional stores, CompleteClaimStore among
// them: the library then reports and claims in a transaction of its own.
type bareDriver struct{ driver.Driver }

// TestCompleteAndClaim: a claim that carries a report finishes the held
// jobs, answers each report's outcome in order (a stale attempt lost, an
// unknown job not found), and claims other jobs; bad reports store nothing
// and name their field.
func TestCompleteAndClaim(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) driver.Driver{
		"postgres":           func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d },
		"sqlite":             func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
		"postgres, no store": func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return bareDriver{d} },
		"sqlite, no store":   func(t *testing.T) driver.Driver { return bareDriver{sqlitetest.New(t)} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := NewClient(open(t), &Config{})
			if err != nil {
				t.Fatal(err)
			}
			for range 6 {
				if _, err := c.Insert(ctx, startArgs{}, nil); err != nil {
					t.Fatal(err)
				}
			}
			p := ClaimParams{Queue: "default", WorkerID: "w", Max: 2}
			res, first, err := c.CompleteAndClaim(ctx, nil, p)
			if err != nil || res != nil || len(first) != 2 {
				t.Fatalf("first claim: %v, %d jobs, %v", res, len(first), err)
			}

			// Bad reports: refused whole, naming the field; nothing stored.
			bad := []CompleteManyItem{{ID: first[0].ID, Attempt: first[0].Attempt}, {ID: first[0].ID}}
			_, _, err = c.CompleteAndClaim(ctx, bad, p)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != "complete[1].id" {
				t.Fatalf("a job reported twice: %v, want an input error on complete[1].id", err)
			}
			if j, err := c.JobGet(ctx, first[0].ID); err != nil || j.State != StateRunning {
				t.Fatalf("after a refused call job %d is %+v, %v", first[0].ID, j, err)
			}

			done := []CompleteManyItem{{ID: first[0].ID, Attempt: first[0].Attempt, Result: []byte(`[1]`)},
				{ID: first[1].ID, Attempt: first[1].Attempt + 1}, {ID: 1 << 40}}
			p.Max = 3
			res, next, err := c.CompleteAndClaim(ctx, done, p)
			if err != nil || len(res) != 3 || len(next) != 3 {
				t.Fatalf("report and claim: %+v, %d jobs, %v", res, len(next), err)
			}
			if res[0].ID != first[0].ID || res[0].Err != nil {
				t.Fatalf("the held job's outcome: %+v", res[0])
			}
			if res[1].ID != first[1].ID || !errors.Is(res[1].Err, ErrLeaseLost) {
				t.Fatalf("the stale attempt's outcome: %+v, want lease lost", res[1])
			}
			if res[2].ID != 1<<40 || !errors.Is(res[2].Err, ErrNotFound) {
				t.Fatalf("the unknown job's outcome: %+v, want not found", res[2])
			}
			if j, err := c.JobGet(ctx, first[0].ID); err != nil || j.State != StateCompleted || string(j.Result) != `[1]` {
				t.Fatalf("the reported job: %+v, %v", j, err)
			}
			if j, err := c.JobGet(ctx, first[1].ID); err != nil || j.State != StateRunning {
				t.Fatalf("the job reported with a stale attempt: %+v, %v", j, err)
			}
			for _, j := range next {
				if j.ID == first[0].ID || j.ID == first[1].ID || j.State != StateRunning || j.WorkerID != "w" {
					t.Fatalf("claimed job %d is %s for %q", j.ID, j.State, j.WorkerID)
				}
			}

			// The last reports, and a claim that takes the last job.
			last := []CompleteManyItem{{ID: first[1].ID, Attempt: first[1].Attempt}}
			for _, j := range next {
				last = append(last, CompleteManyItem{ID: j.ID, Attempt: j.Attempt})
			}
			p.Max, p.Wait = 10, time.Minute
			res, more, err := c.CompleteAndClaim(ctx, last, p)
			if err != nil || len(more) != 1 || len(res) != len(last) {
				t.Fatalf("the last reports: %+v, %d jobs, %v", res, len(more), err)
			}
			for i, r := range res {
				if r.Err != nil || r.ID != last[i].ID {
					t.Fatalf("the last reports' outcome %d: %+v", i, r)
				}
			}
			// Nothing left: a report with a claim that waits until ctx ends.
			waitCtx, stop := context.WithTimeout(ctx, 200*time.Millisecond)
			defer stop()
			res, none, err := c.CompleteAndClaim(waitCtx, []CompleteManyItem{{ID: more[0].ID, Attempt: more[0].Attempt}}, p)
			if !errors.Is(err, context.DeadlineExceeded) || len(none) != 0 || len(res) != 1 || res[0].Err != nil {
				t.Fatalf("a report and a claim that waited in vain: %+v, %d jobs, %v", res, len(none), err)
			}
			if j, err := c.JobGet(ctx, more[0].ID); err != nil || j.State != StateCompleted {
				t.Fatalf("the job reported before the wait: %+v, %v", j, err)
			}
		})
	}
}
