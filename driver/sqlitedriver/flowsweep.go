package sqlitedriver

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/skiplock/skiplock/driver"
)

// FlowSweep drops the slots and buckets of the idle keys among the next
// p.Limit keys after p.After. The keys are read on a reader; the look at
// them and the drop share one write transaction, so that no insert (the
// only writer besides) makes a key's job between them.
func (e executor) FlowSweep(ctx context.Context, p driver.FlowSweepParams) (driver.FlowSwept, error) {
	var out driver.FlowSwept
	keys, err := collect(scanString)(e.rquery(ctx, "FlowSweepNext", sql.Named("after", p.After), sql.Named("limit", p.Limit)))
	if err != nil {
		return out, fmt.Errorf("sweep flow keys: %w", err)
	}
	if len(keys) == 0 {
		return out, nil
	}
	out.Read, out.Last = len(keys), keys[len(keys)-1]
	err = e.inTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		idle, err := collect(scanString)(tx.wquery(ctx, "FlowSweepIdle", sql.Named("keys", jsonText(keys)),
			sql.Named("before", p.Before.UnixMicro()), now))
		if err != nil || len(idle) == 0 {
			return err
		}
		for _, name := range []string{"FlowSweepDropSlots", "FlowSweepDropBuckets"} {
			if _, err := tx.wexec(ctx, name, sql.Named("keys", jsonText(idle))); err != nil {
				return err
			}
		}
		out.Dropped = len(idle)
		return nil
	})
	if err != nil {
		return driver.FlowSwept{}, fmt.Errorf("sweep flow keys: %w", err)
	}
	return out, nil
}
