package skiplock

import "testing"

// A subscriber that does not read loses the events past its buffer, counted;
// emit never waits for it, and a filter keeps other kinds out.
func TestEventsDropWhenFull(t *testing.T) {
	c := &Client{}
	full, cancelFull := c.Subscribe(EventJobCompleted)
	defer cancelFull()
	other, cancelOther := c.Subscribe(EventJobFailed)
	for i := range DefaultEventBuffer + 5 {
		c.events.emitJob(EventJobCompleted, &JobRow{ID: int64(i + 1), State: StateRunning}, StateCompleted, nil)
	}
	if len(full) != DefaultEventBuffer || c.EventsDropped() != 5 || len(other) != 0 {
		t.Fatalf("buffered %d, dropped %d, other %d", len(full), c.EventsDropped(), len(other))
	}
	if e := <-full; e.Job.ID != 1 || e.Job.State != StateCompleted || e.Job.FinishedAt == nil || e.At.IsZero() {
		t.Fatalf("first event %+v", e)
	}
	cancelOther()
	cancelOther()
	if _, open := <-other; open {
		t.Fatal("a cancelled subscription's channel stays open")
	}
	c.events.emitJob(EventJobFailed, &JobRow{ID: 1}, "", nil) // no subscriber left for it: nothing to send on
	if !c.events.on() {
		t.Fatal("the other subscription ended too")
	}
}
