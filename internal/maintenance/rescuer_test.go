package maintenance

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// rescueStore records the since of every JobRescue call; the embedded nil
// JobStore panics on anything else.
type rescueStore struct {
	driver.JobStore
	now    time.Time
	sinces []time.Time
	full   int // how many calls answer a full batch
}

func (s *rescueStore) JobRescue(_ context.Context, limit int, since time.Time) (driver.RescueResult, error) {
	s.sinces = append(s.sinces, since)
	res := driver.RescueResult{Now: s.now}
	if s.full > 0 {
		s.full--
		res.Requeued = limit
	}
	return res, nil
}

func TestRescuerLooksBackToThePreviousPassAndInFullNowAndThen(t *testing.T) {
	t.Parallel()
	s := &rescueStore{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	r := &Rescuer{Store: s, Limit: 10}
	ctx := context.Background()
	pass := func() time.Time {
		t.Helper()
		s.sinces = nil
		if err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		for _, since := range s.sinces[1:] {
			if !since.Equal(s.sinces[0]) {
				t.Fatalf("one pass asked with different since: %v", s.sinces)
			}
		}
		s.now = s.now.Add(2 * time.Second)
		return s.sinces[0]
	}
	if since := pass(); !since.IsZero() {
		t.Fatalf("first pass since %v, want all", since)
	}
	// A pass that fills its batches goes on with the same bound.
	s.full = 2
	want := s.now.Add(-2 * time.Second).Add(-lookbackMargin)
	if since := pass(); !since.Equal(want) || len(s.sinces) != 3 {
		t.Fatalf("second pass since %v in %d calls, want %v in 3", since, len(s.sinces), want)
	}
	for i := 2; i <= fullPassEvery; i++ {
		if since := pass(); since.IsZero() {
			t.Fatalf("pass %d looked at every lease", i+1)
		}
	}
	time.Sleep(time.Millisecond) // more than 20x the fake store's full pass
	if since := pass(); !since.IsZero() {
		t.Fatalf("pass %d since %v, want a full pass", fullPassEvery+2, since)
	}
	// A full pass that took long spaces the next ones out.
	r.lookback.fullCost = time.Hour
	for i := 0; i < 2*fullPassEvery; i++ {
		if since := pass(); since.IsZero() {
			t.Fatalf("a full pass %d passes after one that took an hour", i+1)
		}
	}
}
