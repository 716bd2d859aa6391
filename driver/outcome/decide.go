package outcome

import "github.com/skiplock/skiplock/driver"

// End is how a held job's attempt that did not complete ends.
type End int

const (
	// EndRetry puts the job back after its wait, the attempt spent.
	EndRetry End = iota + 1
	// EndSnooze puts the job back after the snooze, the attempt unspent.
	EndSnooze
	// EndPause pauses the job, the attempt unspent: it was asked to pause.
	EndPause
	// EndCancel cancels the job for good: it was asked to cancel.
	EndCancel
	// EndFail fails the job for good.
	EndFail
)

// Report is how a worker ended an attempt: it asks for a retry (its error
// is not permanent), or to run again later with the attempt unspent.
type Report struct {
	Retry, Snooze bool
}

// Decision is an attempt's end, and the Retryable its error entry is
// recorded with (asked, and retries left).
type Decision struct {
	End       End
	Retryable bool
}

// Decide is the one policy for an attempt that did not complete, whoever
// reports it (a worker in this process, one over HTTP) and whichever way
// it is stored (Fail's statements, a driver's driver.FailStore): a cancel
// request wins, then a pause request (the worker stopped because it was
// asked to), then the snooze; a retry needs retries left.
func Decide(r Report, h driver.HeldState) Decision {
	d := Decision{Retryable: r.Retry && h.Attempt <= h.MaxRetries}
	switch {
	case h.CancelRequested:
		d.End = EndCancel
	case h.PauseRequested:
		d.End = EndPause
	case r.Snooze:
		d.End = EndSnooze
	case d.Retryable:
		d.End = EndRetry
	default:
		d.End = EndFail
	}
	return d
}
