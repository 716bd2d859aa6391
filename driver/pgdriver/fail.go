package pgdriver

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/depgraph"
)

// JobFail fails one held job in one statement that answers the job as it
// ends, as outcome.Fail would; see driver.FailStore. Only a job it finished that has dependents
// takes a transaction more to settle them (the promoter settles them too,
// should this process stop in between).
func (e executor) JobFail(ctx context.Context, p driver.FailParams) (*driver.Job, error) {
	s := newJobScanner()
	var settle bool
	s.dest = append(s.dest, &settle)
	kinds, waits := kindLeases([]string{}, p.WaitKinds, p.Waits)
	args := failArgs{heldArgs(p.HeldJob), p.Error.Retryable, errorEntry(&p.Error), secs(p.Wait), kinds, waits}
	queue, citus, err := e.heldQueue(ctx, p.HeldJob)
	if err != nil {
		return nil, err
	}
	sql, values := jobFailHeld.SQL, jobFailHeld.Args(args)
	if citus {
		// One shard's statement (citus_held.go).
		sql, values = citusJobFailHeld.SQL, citusJobFailHeld.Args(citusFailArgs{args, queue})
	}
	j, err := s.scan(e.q.QueryRow(ctx, sql, values...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, driver.ErrLeaseLost
	}
	if err != nil || !settle {
		return j, err
	}
	return j, e.inTx(ctx, func(tx executor) error { return depgraph.SettleParents(ctx, tx, []int64{j.ID}) })
}

var jobFailHeld = bind[failArgs]("JobFailHeld")

type failArgs struct {
	heldArgs
	Retryable bool      `sql:"retryable"`
	Error     string    `sql:"error"`
	Wait      float64   `sql:"wait"`
	WaitKinds []string  `sql:"wait_kinds"`
	Waits     []float64 `sql:"waits"`
}

var _ driver.FailStore = executor{}
