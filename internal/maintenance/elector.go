package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Elector keeps one leader among the processes sharing a database, so that
// the rescuer and the scheduler run once.
type Elector struct {
	Store driver.LeaderStore
	Name  string
	ID    string
	TTL   time.Duration
	// OnChange is called when this process gains or loses leadership.
	OnChange func(leader bool)
	// OnTick, when set, runs after every attempt, leader or not (the
	// client's process heartbeat rides on it).
	OnTick func(ctx context.Context)
	Logger *slog.Logger

	leader bool
}

// RunOnce tries to become or stay leader and reports leadership changes.
func (e *Elector) RunOnce(ctx context.Context) error {
	ok, err := e.Store.LeaderAttempt(ctx, e.Name, e.ID, e.TTL)
	if err != nil {
		// Unsure whether we still lead: step down rather than run twice.
		ok = false
	}
	if ok != e.leader {
		e.leader = ok
		orLogger(e.Logger).Info("leadership changed", "leader", ok, "id", e.ID)
		if e.OnChange != nil {
			e.OnChange(ok)
		}
	}
	if e.OnTick != nil {
		e.OnTick(ctx)
	}
	return err
}

// Run tries every TTL/3 until ctx ends, then resigns.
func (e *Elector) Run(ctx context.Context) {
	runEvery(ctx, "elector", e.TTL/3, orLogger(e.Logger), e.RunOnce)
	if e.leader {
		e.leader = false
		if e.OnChange != nil {
			e.OnChange(false)
		}
		rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = e.Store.LeaderResign(rctx, e.Name, e.ID)
	}
}
