package skiplock_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// Metrics reads the queues in the same pass as the job counts, and answers
// them as QueueList does: settings, live counts, oldest pending age.
func TestMetricsQueuesMatchQueueList(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		past := time.Now().Add(-time.Hour)
		for _, o := range []*skiplock.InsertOpts{{Queue: "a"}, {Queue: "a", RunAt: past},
			{Queue: "b", RunAt: time.Now().Add(time.Hour)}} {
			if _, err := c.Insert(b.ctx, skiplock.RawArgs{KindName: "k", Payload: []byte(`{}`)}, o); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.QueuePause(b.ctx, "idle", skiplock.QueueActionOpts{Create: true}); err != nil {
			t.Fatal(err)
		}
		m, err := c.Metrics(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		list, err := c.QueueList(b.ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Queues) != 3 || len(list) != 3 {
			t.Fatalf("queues %+v, list %+v", m.Queues, list)
		}
		for i := range list {
			got, want := m.Queues[i], list[i]
			if d := got.OldestPendingAge - want.OldestPendingAge; d < -time.Second || d > time.Second {
				t.Errorf("queue %s: oldest pending age %s, QueueList %s", want.Name, got.OldestPendingAge, want.OldestPendingAge)
			}
			got.OldestPendingAge, want.OldestPendingAge = 0, 0
			if !reflect.DeepEqual(got, want) {
				t.Errorf("queue %d: %+v, QueueList %+v", i, got, want)
			}
		}
		if a := m.Queues[0]; a.OldestPendingAge < 59*time.Minute {
			t.Errorf("queue a: oldest pending age %s, want about an hour", a.OldestPendingAge)
		}
		if m.Window != skiplock.MetricsWindow || m.Rescued["requeued"] != 0 {
			t.Errorf("window %s, rescued %v", m.Window, m.Rescued)
		}
	})
}
