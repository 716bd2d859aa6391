package drivertest

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// A process beats, keeps its first start, is listed until it is stale or
// deleted, and a stale row goes at the next beat of any process.
var _ = add("ProcessesBeatListExpire", func(e *env) {
	started := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	p := &driver.Process{ID: "host-1:42", Host: "host-1", PID: 42, Version: "v1.2.3",
		Queues: []string{"default", "mail"}, StartedAt: started}
	if err := e.processes().ProcessBeat(e.ctx, p, time.Minute); err != nil {
		e.t.Fatal(err)
	}
	again := *p
	again.StartedAt = time.Now()
	if err := e.processes().ProcessBeat(e.ctx, &again, time.Minute); err != nil {
		e.t.Fatal(err)
	}
	if err := e.processes().ProcessBeat(e.ctx, &driver.Process{ID: "server", StartedAt: started}, time.Minute); err != nil {
		e.t.Fatal(err)
	}
	list, err := e.processes().ProcessList(e.ctx, time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "host-1:42" || list[1].ID != "server" {
		e.t.Fatalf("processes %+v, want host-1:42 and server", list)
	}
	got := list[0]
	if got.Host != "host-1" || got.PID != 42 || got.Version != "v1.2.3" || !slices.Equal(got.Queues, p.Queues) ||
		!got.StartedAt.Equal(started) || time.Since(got.HeartbeatAt).Abs() > time.Minute {
		e.t.Fatalf("process %+v, want %+v started at %s", got, p, started)
	}
	if len(list[1].Queues) != 0 {
		e.t.Fatalf("server's queues %v, want none", list[1].Queues)
	}
	if list, err = e.processes().ProcessList(e.ctx, 0); err != nil || len(list) != 0 {
		e.t.Fatalf("with no staleness allowed: %+v, %v; want none", list, err)
	}
	if err := e.processes().ProcessDelete(e.ctx, "server"); err != nil {
		e.t.Fatal(err)
	}
	// A beat that allows no staleness expires every other row.
	if err := e.processes().ProcessBeat(e.ctx, &driver.Process{ID: "last", StartedAt: started}, 0); err != nil {
		e.t.Fatal(err)
	}
	if list, err = e.processes().ProcessList(e.ctx, time.Minute); err != nil || len(list) != 1 || list[0].ID != "last" {
		e.t.Fatalf("after the expiring beat: %+v, %v; want last only", list, err)
	}
})
