package skiplock_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
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

func wantLost(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, skiplock.ErrLeaseLost) {
		t.Fatalf("%s of the old attempt: %v, want ErrLeaseLost", what, err)
	}
	if want := fmt.Sprintf("attempt %d", 2); !strings.Contains(err.Error(), want) {
		t.Fatalf("%s of the old attempt: %q does not say the job is at %s", what, err, want)
	}
}
