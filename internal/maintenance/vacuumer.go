package maintenance

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Vacuumer keeps the hot table small under churn. It vacuums when dead rows
// pile up, far more often than autovacuum's one-minute naptime, and rebuilds
// the table when it has grown to many times what its live jobs need: after
// a burst, or while a transaction held open elsewhere keeps vacuum from
// removing anything.
type Vacuumer struct {
	Store driver.HotTableStore
	// Interval is how often the table is looked at (default 250 ms).
	Interval time.Duration
	// DeadRows is how many dead rows make a vacuum worth it (default 100).
	DeadRows int64
	// Rebuild says when the table is rebuilt (driver defaults when zero).
	Rebuild driver.RebuildLimits
	// Spill says when a spill table is left for another (driver defaults
	// when zero).
	Spill  driver.SpillLimits
	Logger *slog.Logger

	mu      sync.Mutex
	heldBy  string    // the holder last warned of
	refused string    // the refusal last warned of
	rest    time.Time // no vacuum before this: see RunOnce
}

// vacuumShare is the most of its time the vacuumer spends vacuuming: after a
// vacuum that took d, the next waits 9·d. On a small table a vacuum takes a
// millisecond and runs every Interval; beside a backlog of tens of thousands
// of jobs one takes tens of milliseconds (it reads every index whole), and
// back to back they cost a fifth of the throughput.
const vacuumShare = 10

// RunOnce rebuilds the hot table if it is bloated, else vacuums it if it
// needs it.
//
// A transaction open elsewhere that holds a lock on the hot table stops
// any rebuild; while it lasts, new jobs go to spill tables that can be
// emptied whatever it holds, and come back once it has ended.
func (v *Vacuumer) RunOnce(ctx context.Context) error {
	log := orLogger(v.Logger)
	s, err := v.Store.HotTableSpill(ctx, false, v.Spill)
	if err != nil {
		return err
	}
	if s.Active {
		v.noteSpill(log, s)
		v.noteHolder(log, s.HeldBy)
		return nil
	}
	r, err := v.Store.HotTableRebuild(ctx, v.Rebuild)
	if err != nil {
		return err
	}
	v.noteHolder(log, r.HeldBy)
	v.noteRefusal(log, r.Refused)
	if r.HeldBy != "" {
		s, err := v.Store.HotTableSpill(ctx, true, v.Spill)
		if err != nil {
			return err
		}
		v.noteRefusal(log, s.Refused)
		v.noteSpill(log, s)
		return nil
	}
	if r.Done {
		log.Info("rebuilt the hot table", "jobs", r.Moved, "bytes_before", r.BytesBefore, "bytes_after", r.BytesAfter)
		return nil
	}
	dead := v.DeadRows
	if dead <= 0 {
		dead = 100
	}
	start := time.Now()
	v.mu.Lock()
	resting := start.Before(v.rest)
	v.mu.Unlock()
	if resting {
		return nil
	}
	did, err := v.Store.HotTableVacuum(ctx, dead)
	if did {
		took := time.Since(start)
		v.mu.Lock()
		v.rest = start.Add(took * vacuumShare)
		v.mu.Unlock()
		log.Debug("vacuumed the hot table", "took", took)
	}
	return err
}

// noteHolder warns once per holder of a transaction that keeps the hot
// table from being rebuilt, and says when it has let go.
func (v *Vacuumer) noteHolder(log *slog.Logger, heldBy string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if heldBy == v.heldBy {
		return
	}
	if heldBy != "" {
		log.Warn("a transaction open elsewhere holds a lock on the hot table: it cannot be rebuilt until that transaction ends; new jobs go to spill tables meanwhile", "holder", heldBy)
	} else {
		log.Info("the transaction that held the hot table has ended", "holder", v.heldBy)
	}
	v.heldBy = heldBy
}

// noteSpill logs what a look at the spill tables did.
func (v *Vacuumer) noteSpill(log *slog.Logger, s driver.Spill) {
	switch {
	case s.Opened != "":
		log.Info("new jobs go to a spill table while the hot table is held", "table", s.Opened, "spill_tables", s.Tables)
	case s.Emptied != "":
		log.Debug("emptied a drained spill table", "table", s.Emptied, "jobs_moved", s.Moved, "spill_bytes", s.Bytes)
	case s.Dropped != "":
		log.Info("took a spill table's jobs back into the hot table", "table", s.Dropped, "jobs_moved", s.Moved, "spill_tables_left", s.Tables)
	}
}

// noteRefusal warns once of each reason a needed rebuild was refused.
func (v *Vacuumer) noteRefusal(log *slog.Logger, refused string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if refused != "" && refused != v.refused {
		log.Warn("the hot table needs a rebuild that cannot happen", "reason", refused)
		v.refused = refused
	}
}

// Run looks at the hot table every Interval until ctx ends.
func (v *Vacuumer) Run(ctx context.Context) {
	interval := v.Interval
	if interval <= 0 {
		interval = 250 * time.Millisecond
	}
	runEvery(ctx, "vacuumer", interval, orLogger(v.Logger), v.RunOnce)
}
