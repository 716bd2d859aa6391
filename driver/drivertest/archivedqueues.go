package drivertest

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e *env) queueNames() []string {
	e.t.Helper()
	qs, err := e.stats().QueueList(e.ctx, false)
	if err != nil {
		e.t.Fatal(err)
	}
	names := []string{}
	for _, q := range qs {
		names = append(names, q.Name)
		if q.Name != "default" && (q.Paused || len(q.Counts) != 0 || q.OldestPendingAge != 0) {
			e.t.Fatalf("queue %s of finished jobs only: %+v, want no live counts", q.Name, q)
		}
	}
	return names
}

// QueueListArchivedQueues: a queue whose every job finished is listed,
// from the recent archive at once and, for jobs finished before
// QueueRecentWindow, once the queue recorder recorded it; a recorded queue
// is not paused and a paused one stays paused.
var _ = add("QueueListArchivedQueues", func(e *env) {
	mail := job("email")
	mail.Queue = "mail"
	e.complete(e.claimID(e.insert(mail), "w1", lease), "")
	if names := e.queueNames(); !slices.Equal(names, []string{"mail"}) {
		e.t.Fatalf("queues %v, want mail (its one job completed)", names)
	}
	// A job of queue reports finished an hour ago, as a restore from the
	// vault puts it back: beyond the recent archive, not listed until
	// recorded.
	old := job("report")
	old.Queue = "tmp"
	done := e.insert(old)
	e.complete(e.claimID(done, "w1", lease), "")
	back := vaulted(e.wantState(done.ID, driver.StateCompleted), done.ID+1000)
	hourAgo := time.Now().Add(-time.Hour)
	back.Queue, back.FinishedAt, back.UpdatedAt = "reports", &hourAgo, hourAgo
	e.restore([]*driver.Job{back}, driver.RestoreArchive)
	if names := e.queueNames(); !slices.Equal(names, []string{"mail", "tmp"}) {
		e.t.Fatalf("queues %v before recording, want mail and tmp", names)
	}
	if err := e.admin().QueuePause(e.ctx, "mail"); err != nil {
		e.t.Fatal(err)
	}
	if err := e.archive().QueueRecordArchived(e.ctx, hourAgo.Add(-time.Minute)); err != nil {
		e.t.Fatal(err)
	}
	qs, err := e.stats().QueueList(e.ctx, false)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(qs) != 3 || qs[0].Name != "mail" || !qs[0].Paused || qs[1].Name != "reports" || qs[1].Paused {
		e.t.Fatalf("queues %+v, want mail paused and reports recorded", qs)
	}
	if err := e.archive().QueueRecordArchived(e.ctx, time.Now().Add(-time.Minute)); err != nil {
		e.t.Fatal(err)
	}
	if qs, err = e.stats().QueueList(e.ctx, false); err != nil || len(qs) != 3 || !qs[0].Paused {
		e.t.Fatalf("recording again: %+v, %v", qs, err)
	}
})
