package driver

import "context"

// StopStore holds the statements that stop a running job from outside its
// worker: a pause request, the pause itself, and the look-up of the
// requests (cancel, pause) that a process running jobs makes.
type StopStore interface {
	// JobRequestPause asks a running job to pause (pause_requested), unless
	// it was asked to cancel; ErrNotFound when no such running job.
	JobRequestPause(ctx context.Context, id int64) (*Job, error)
	// JobPauseHeld pauses a held job that was asked to pause, its attempt
	// unspent and its checkpoint kept; ErrLeaseLost when it is not held or
	// was not asked to pause (or was asked to cancel since).
	JobPauseHeld(ctx context.Context, h HeldJob) (*Job, error)
	// JobStopRequests answers which of the running jobs ids were asked to
	// cancel or pause.
	//skiplock:read
	JobStopRequests(ctx context.Context, ids []int64) ([]StopRequest, error)
}

// StopRequest is what a running job was asked to do.
type StopRequest struct {
	ID     int64
	Cancel bool
	Pause  bool
}
