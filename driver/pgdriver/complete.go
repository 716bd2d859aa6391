package pgdriver

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// JobComplete finishes one held job in one statement that answers the
// finished row; see driver.JobStore. Only when the job released waiting
// dependents does a second statement make them runnable.
func (e executor) JobComplete(ctx context.Context, p driver.CompleteParams) (*driver.Job, error) {
	s := newJobScanner()
	var released int64
	s.dest = append(s.dest, &released)
	j, err := s.scan(e.q.QueryRow(ctx, jobCompleteHeld.SQL, jobCompleteHeld.Args(completeHeldArgs{heldArgs(p.HeldJob), nullable(p.Result)})...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, driver.ErrLeaseLost
	}
	if err != nil {
		return nil, err
	}
	if released > 0 {
		if _, err := e.ReleaseWaiting(ctx); err != nil { // and wakes their queues
			return nil, err
		}
	}
	return j, nil
}

var jobCompleteHeld = bind[completeHeldArgs]("JobCompleteHeld")

// completeHeldArgs finish a held job with Result (nil: NULL).
type completeHeldArgs struct {
	heldArgs
	Result any `sql:"result"`
}
