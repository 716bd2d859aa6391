package skiplock_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
)

// TestExternalReportsAreFencedOnAttempt: an external worker that lost its
// jobs to the rescuer and claimed them again under the same worker id
// cannot report on the old attempt; reports on the new one go through.
func TestExternalReportsAreFencedOnAttempt(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		a := b.insert(t, c, taskArgs{Name: "a"}, nil)
		f := b.insert(t, c, taskArgs{Name: "f"}, nil)
		// A claim starts where the last one ended: jobs back behind that
		// place come to a later claim.
		claim := func(lease time.Duration) {
			t.Helper()
			n := 0
			eventually(t, "both jobs claimed", func() bool {
				got, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 2, Lease: lease})
				if err != nil {
					t.Fatal(err)
				}
				n += len(got)
				return n == 2
			})
		}
		claim(time.Second)
		eventually(t, "leases rescued", func() bool {
			if _, err := b.drv.JobRescue(b.ctx, 100, time.Time{}); err != nil {
				t.Fatal(err)
			}
			return b.job(t, a.ID).State == skiplock.StatePending && b.job(t, f.ID).State == skiplock.StatePending
		})
		claim(time.Minute)

		pct := 90
		_, err := c.Heartbeat(b.ctx, a.ID, skiplock.HeartbeatParams{WorkerID: "w", Attempt: 1, Progress: &pct})
		wantLost(t, "heartbeat", err)
		_, _, err = c.Complete(b.ctx, a.ID, skiplock.CompleteParams{WorkerID: "w", Attempt: 1, Result: json.RawMessage(`1`),
			Next: []skiplock.InsertManyParams{{Args: taskArgs{Name: "next"}}}})
		wantLost(t, "complete", err)
		_, err = c.Fail(b.ctx, a.ID, skiplock.FailParams{WorkerID: "w", Attempt: 1, Message: "old"})
		wantLost(t, "fail", err)
		if j := b.job(t, a.ID); j.State != skiplock.StateRunning || j.Attempt != 2 || j.Progress != 0 || len(j.Errors) != 1 {
			t.Fatalf("stale reports changed the job: %+v", j)
		}
		if n := len(b.jobsOfKind(t, "wf_task")); n != 2 {
			t.Fatalf("a stale completion inserted its next job: %d wf_task jobs", n)
		}

		pct = 50
		if _, err := c.Heartbeat(b.ctx, a.ID, skiplock.HeartbeatParams{WorkerID: "w", Attempt: 2, Progress: &pct}); err != nil {
			t.Fatalf("heartbeat of the new attempt: %v", err)
		}
		done, next, err := c.Complete(b.ctx, a.ID, skiplock.CompleteParams{WorkerID: "w", Attempt: 2,
			Next: []skiplock.InsertManyParams{{Args: taskArgs{Name: "next"}}}})
		if err != nil || done.State != skiplock.StateCompleted || len(next) != 1 {
			t.Fatalf("complete of the new attempt: %+v, %v, %v", done, next, err)
		}
		failed, err := c.Fail(b.ctx, f.ID, skiplock.FailParams{WorkerID: "w", Attempt: 2, Message: "no"})
		if err != nil || failed.State != skiplock.StateFailed || len(failed.Errors) != 2 {
			t.Fatalf("fail of the new attempt: %+v, %v", failed, err)
		}
	})
}

// TestExternalReportAttemptInput: a negative attempt names the field; an
// unknown job is not found whether or not the report names an attempt.
func TestExternalReportAttemptInput(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		var ve *skiplock.ValidationError
		_, err := c.Heartbeat(b.ctx, 1, skiplock.HeartbeatParams{WorkerID: "w", Attempt: -1})
		if !errors.As(err, &ve) || ve.Field != "attempt" {
			t.Fatalf("heartbeat with attempt -1: %v", err)
		}
		for _, attempt := range []int{0, 1} {
			_, err := c.Heartbeat(b.ctx, 1<<40, skiplock.HeartbeatParams{WorkerID: "w", Attempt: attempt})
			_, _, err2 := c.Complete(b.ctx, 1<<40, skiplock.CompleteParams{WorkerID: "w", Attempt: attempt})
			_, err3 := c.Fail(b.ctx, 1<<40, skiplock.FailParams{WorkerID: "w", Attempt: attempt})
			for _, e := range []error{err, err2, err3} {
				if !errors.Is(e, skiplock.ErrNotFound) {
					t.Errorf("report on an unknown job, attempt %d: %v", attempt, e)
				}
			}
		}
	})
}

// TestExternalReportAttemptBeyondInt4: an attempt no job can have (past
// the int4 the database stores it in) is a *ValidationError naming the
// field on every report, before the database: the job is left as it was.
func TestExternalReportAttemptBeyondInt4(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		j := b.insert(t, c, taskArgs{Name: "a"}, nil)
		other := b.insert(t, c, taskArgs{Name: "b"}, nil)
		if got, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 1}); err != nil || len(got) != 1 || got[0].ID != j.ID {
			t.Fatalf("claim: %v, %v", got, err)
		}
		pct := 50
		for _, attempt := range []int{1 << 31, 1<<32 + 1, -1 << 31} {
			bad := []skiplock.CompleteManyItem{{ID: other.ID}, {ID: j.ID, Attempt: attempt, Result: json.RawMessage(`1`)}}
			_, hbErr := c.Heartbeat(b.ctx, j.ID, skiplock.HeartbeatParams{WorkerID: "w", Attempt: attempt, Progress: &pct})
			_, _, doneErr := c.Complete(b.ctx, j.ID, skiplock.CompleteParams{WorkerID: "w", Attempt: attempt, Result: json.RawMessage(`1`)})
			_, failErr := c.Fail(b.ctx, j.ID, skiplock.FailParams{WorkerID: "w", Attempt: attempt, Message: "m"})
			_, manyErr := c.CompleteMany(b.ctx, "w", bad)
			_, claimed, claimErr := c.CompleteAndClaim(b.ctx, bad, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 1})
			for _, e := range []struct {
				err   error
				field string
			}{{hbErr, "attempt"}, {doneErr, "attempt"}, {failErr, "attempt"}, {manyErr, "jobs[1].attempt"}, {claimErr, "complete[1].attempt"}} {
				var ve *skiplock.ValidationError
				if !errors.As(e.err, &ve) || ve.Field != e.field {
					t.Errorf("attempt %d: %v, want a *ValidationError naming %s", attempt, e.err, e.field)
				}
			}
			if len(claimed) != 0 {
				t.Fatalf("a claim with a refused report claimed %v", claimed)
			}
		}
		if got := b.job(t, j.ID); got.State != skiplock.StateRunning || got.Attempt != 1 || got.Progress != 0 || got.Result != nil || len(got.Errors) != 0 {
			t.Fatalf("refused reports changed the job: %+v", got)
		}
		if got := b.job(t, other.ID); got.State != skiplock.StatePending {
			t.Fatalf("refused reports changed the other job: %+v", got)
		}
	})
}

func wantLost(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, skiplock.ErrLeaseLost) {
		t.Fatalf("%s of the old attempt: %v, want ErrLeaseLost", what, err)
	}
	if want := fmt.Sprintf("attempt %d", 2); !strings.Contains(err.Error(), want) {
		t.Fatalf("%s of the old attempt: %q does not say the job is at %s", what, err, want)
	}
}

// TestFailWaitsForItsKindsBackoff: a failed attempt reported with its
// attempt is retried after its kind's backoff (here the contract's), and a
// kind without one after Config.Backoff, on a driver that fails it in one
// statement as on one that reads the job first.
func TestFailWaitsForItsKindsBackoff(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		set, err := contract.Parse([]byte("version: 1\nkinds:\n  wf_task: {backoff: {type: fixed, delay: 1h}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			contracts *contract.Set
			want      skiplock.JobState
		}{{set, skiplock.StateScheduled}, {nil, skiplock.StatePending}} {
			client := b.client(t, false, func(cfg *skiplock.Config) {
				cfg.Contracts, cfg.Backoff = c.contracts, func(int) time.Duration { return 0 }
			})
			j := b.insert(t, client, taskArgs{Name: "a"}, &skiplock.InsertOpts{Queue: string(c.want)})
			got, err := client.Claim(b.ctx, skiplock.ClaimParams{Queue: j.Queue, WorkerID: "w", Max: 1})
			if err != nil || len(got) != 1 {
				t.Fatalf("claim: %v, %v", got, err)
			}
			failed, err := client.Fail(b.ctx, j.ID, skiplock.FailParams{WorkerID: "w", Attempt: 1, Retryable: true,
				ErrorType: "boom"})
			if err != nil || failed.State != c.want || len(failed.Errors) != 1 || !failed.Errors[0].Retryable {
				t.Fatalf("fail (contracts %v): %+v, %v", c.contracts != nil, failed, err)
			}
			if c.want == skiplock.StateScheduled && time.Until(failed.RunAt) < 50*time.Minute {
				t.Fatalf("retried at %v, want an hour from now", failed.RunAt)
			}
		}
	})
}
