package skiplock

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/pgtest"
)

func TestClaimPlacesKeyByQueueTenantAndKindSet(t *testing.T) {
	t.Parallel()
	var cps claimPlaces
	acme, other := "acme", "other"
	a := cps.of("q", &acme, []string{"b", "a"})
	if cps.of("q", &acme, []string{"a", "b"}) != a {
		t.Fatal("the same kinds in another order got another place")
	}
	for _, p := range []*claimPlace{cps.of("q", &other, []string{"a", "b"}), cps.of("q", nil, []string{"a", "b"}),
		cps.of("r", &acme, []string{"a", "b"}), cps.of("q", &acme, []string{"a"})} {
		if p == a {
			t.Fatal("another queue, tenant or kind set shared a place")
		}
	}
	for i := range maxClaimPlaces {
		cps.of(fmt.Sprint("q", i), nil, nil)
	}
	if n := len(cps.places); n > maxClaimPlaces {
		t.Fatalf("%d places kept, at most %d", n, maxClaimPlaces)
	}
}

// A client that stops while a job's insert-and-start is in flight hands the
// job back: pending, its attempt unspent, for another worker to claim.
func TestInsertStartedAfterStopIsHandedBack(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	workers := NewWorkers()
	MustAddWorker(workers, WorkFunc[startArgs](func(context.Context, *Job[startArgs]) error { return nil }))
	c, err := NewClient(drv, &Config{Workers: workers, FetchPollInterval: 20 * time.Millisecond,
		Queues: map[string]QueueConfig{"default": {MaxWorkers: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := c.insertParams(startArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var prod *producer
	for prod == nil {
		if prod = c.startsAtInsert(p); prod == nil {
			if ctx.Err() != nil {
				t.Fatal("the idle client never offered to start an insert")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c.insertAndStart(ctx, prod, p)
	if err != nil {
		t.Fatal(err)
	}
	j, err := drv.JobGet(ctx, res.Job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != StatePending || j.Attempt != 0 || res.Job.State != StatePending {
		t.Fatalf("job inserted as the client stopped: state %s attempt %d (answered %s), want pending attempt 0",
			j.State, j.Attempt, res.Job.State)
	}
	if n := prod.active.Load(); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
	// Inserts through the stopped client take the usual path.
	if prod := c.startsAtInsert(p); prod != nil {
		t.Fatal("a stopped client offered to start an insert")
	}
	later, err := c.Insert(ctx, startArgs{}, nil)
	if err != nil || later.Job.State != StatePending || later.Job.Attempt != 0 {
		t.Fatalf("insert through a stopped client: %+v, %v", later.Job, err)
	}
}

type startArgs struct{}

func (startArgs) Kind() string { return "start" }

// One slow head claim does not put the next far away: the interval is 20
// times a head claim's cost, and maxHeadEvery at most.
func TestHeadClaimIntervalAfterASlowHeadClaim(t *testing.T) {
	t.Parallel()
	if got := headEvery(2 * time.Millisecond); got != 40*time.Millisecond {
		t.Fatalf("head claims of 2 ms come every %v, want 40ms", got)
	}
	for _, cost := range []time.Duration{250 * time.Millisecond, 900 * time.Millisecond, time.Minute} {
		if got := headEvery(cost); got != maxHeadEvery {
			t.Fatalf("after a head claim of %v the next comes after %v, want %v", cost, got, maxHeadEvery)
		}
	}
}
