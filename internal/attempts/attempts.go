// Package attempts words a job's attempts the one way the CLI and the
// dashboard show them: "attempt N of M", where M = max_retries + 1 is the
// number of runs the job is allowed (its first attempt and its retries),
// and how each failed attempt ended.
package attempts

import (
	"fmt"

	"github.com/skiplock/skiplock"
)

// Allowed answers the runs a job is allowed: its first attempt and its
// max_retries retries.
func Allowed(maxRetries int) int { return maxRetries + 1 }

// Of answers "N of M": the attempt that runs (or ran last) of the runs
// allowed. A job that waits for its next run counts that next one.
func Of(state skiplock.JobState, attempt, maxRetries int) string {
	if waiting(state) {
		attempt++
	}
	return fmt.Sprintf("%d of %d", attempt, Allowed(maxRetries))
}

// Text answers where a job stands: "pending (next attempt 1 of 4)",
// "failed (attempt 4 of 4)".
func Text(state skiplock.JobState, attempt, maxRetries int) string {
	if waiting(state) {
		return fmt.Sprintf("%s (next attempt %s)", state, Of(state, attempt, maxRetries))
	}
	return fmt.Sprintf("%s (attempt %s)", state, Of(state, attempt, maxRetries))
}

// waiting tells a state whose job has not started its next attempt.
func waiting(state skiplock.JobState) bool {
	switch state {
	case skiplock.StatePending, skiplock.StateScheduled, skiplock.StateWaiting, skiplock.StatePaused:
		return true
	}
	return false
}

// Notes for how a failed attempt ended (End).
const (
	Retried   = "retried"
	Permanent = "not retryable"
	Exhausted = "retries exhausted"
	// Ended is a failure that ended the job, which was retried by hand
	// since: whether its error allowed a retry is not recorded.
	Ended = "failed the job"
	// ParentFailed is a job cancelled because a job it depends on failed.
	ParentFailed = "a parent failed"
)

// End says how failed attempt i of job v ended. A failure records only
// whether the job was retried after it; "not retryable" is said only of
// an error that refused a retry with retries left (a permanent error, or
// a worker that said so), "retries exhausted" of one on the last attempt
// allowed.
func End(v *skiplock.JobView, i int) string {
	e := v.Errors[i]
	switch {
	case e.Retryable:
		return Retried
	case e.Type == "dependency":
		return ParentFailed
	case e.Type == "lease_expired":
		// The rescuer fails a job whose lease ran out only when it has
		// no attempt left.
		return Exhausted
	case i < len(v.Errors)-1 || v.State != skiplock.StateFailed || e.Attempt != v.Attempt:
		// A failure a retry by hand followed: max_retries has moved
		// since, so its budget then is not known.
		return Ended
	case e.Attempt >= Allowed(v.MaxRetries):
		return Exhausted
	}
	return Permanent
}
