package pgdriver

import (
	"context"
	"fmt"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// FlowSweep drops the slots and buckets of the idle keys among the next
// p.Limit keys after p.After. The keys are read outside any transaction;
// each idle one is locked against inserts (FlowKeysLock) and found idle
// again once locked, then dropped, in one short transaction: inserts of
// the keys it holds wait for it.
func (e executor) FlowSweep(ctx context.Context, p driver.FlowSweepParams) (driver.FlowSwept, error) {
	var out driver.FlowSwept
	keys, err := collectStrings(e.q.Query(ctx, flowSweepNext.SQL, flowSweepNext.Args(sweepNextArgs{p.After, p.Limit})...))
	if err != nil {
		return out, fmt.Errorf("sweep flow keys: %w", err)
	}
	if len(keys) == 0 {
		return out, nil
	}
	out.Read, out.Last = len(keys), keys[len(keys)-1]
	err = e.inTx(ctx, func(tx executor) error {
		idle, err := tx.flowSweepIdle(ctx, keys, p.Before)
		if err != nil || len(idle) == 0 {
			return err
		}
		// The first look saw the keys as they were before its locks: an
		// insert that committed while it took them is seen now.
		if idle, err = tx.flowSweepIdle(ctx, idle, p.Before); err != nil || len(idle) == 0 {
			return err
		}
		out.Dropped = len(idle)
		_, err = tx.q.Exec(ctx, flowSweepDrop.SQL, flowSweepDrop.Args(keysArg{idle})...)
		return err
	})
	if err != nil {
		return driver.FlowSwept{}, fmt.Errorf("sweep flow keys: %w", err)
	}
	return out, nil
}

func (e executor) flowSweepIdle(ctx context.Context, keys []string, before time.Time) ([]string, error) {
	return collectStrings(e.q.Query(ctx, flowSweepIdle.SQL, flowSweepIdle.Args(sweepIdleArgs{keys, before})...))
}

var (
	flowSweepNext = bind[sweepNextArgs]("FlowSweepNext")
	flowSweepIdle = bind[sweepIdleArgs]("FlowSweepIdle")
	flowSweepDrop = bind[keysArg]("FlowSweepDrop")
)

// sweepNextArgs pick up to Limit keys after After.
type sweepNextArgs struct {
	After string `sql:"after"`
	Limit int    `sql:"limit"`
}

// sweepIdleArgs: a key whose job started at or after Before is not idle.
type sweepIdleArgs struct {
	Keys   []string  `sql:"keys"`
	Before time.Time `sql:"before"`
}
