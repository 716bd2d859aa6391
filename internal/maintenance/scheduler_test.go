package maintenance

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// promoteStore records the since of every promotion; the embedded nil
// Executor panics on anything else.
type promoteStore struct {
	driver.Executor
	now    time.Time
	sinces []time.Time
}

func (s *promoteStore) JobPromoteScheduled(_ context.Context, _ int, since time.Time) (driver.PromoteResult, error) {
	s.sinces = append(s.sinces, since)
	return driver.PromoteResult{Now: s.now}, nil
}

func TestSchedulerLooksBackToThePreviousPass(t *testing.T) {
	t.Parallel()
	s := &promoteStore{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	sch := &Scheduler{Store: s}
	for range 2 {
		if err := sch.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.sinces) != 2 || !s.sinces[0].IsZero() || !s.sinces[1].Equal(s.now.Add(-lookbackMargin)) {
		t.Fatalf("sinces %v, want [zero %v]", s.sinces, s.now.Add(-lookbackMargin))
	}
}
