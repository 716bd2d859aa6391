package drivertest

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock/driver"
)

var _ = add("LeaderElection", func(e *env) {
	attempt := func(id string, want bool) {
		e.t.Helper()
		ok, err := e.d.LeaderAttempt(e.ctx, "maintenance", id, time.Second)
		if err != nil || ok != want {
			e.t.Fatalf("LeaderAttempt(%s): %v, %v, want %v", id, ok, err, want)
		}
	}
	attempt("a", true)
	attempt("b", false)
	attempt("a", true)
	if ok, _ := e.d.LeaderAttempt(e.ctx, "other", "b", time.Second); !ok {
		e.t.Fatal("one name's leader blocked another name")
	}
	time.Sleep(1200 * time.Millisecond)
	attempt("b", true)
	attempt("a", false)
	if err := e.d.LeaderResign(e.ctx, "maintenance", "a"); err != nil {
		e.t.Fatal(err)
	}
	attempt("a", false)
	if err := e.d.LeaderResign(e.ctx, "maintenance", "b"); err != nil {
		e.t.Fatal(err)
	}
	attempt("a", true)
})

var _ = add("Schedules", func(e *env) {
	up := func(s driver.Schedule) *driver.Schedule {
		e.t.Helper()
		out, err := e.schedules().ScheduleUpsert(e.ctx, &s)
		if err != nil {
			e.t.Fatalf("upsert %s: %v", s.Key, err)
		}
		return out
	}
	a := up(driver.Schedule{Key: "a", Kind: "crawl", Queue: "default", Payload: json.RawMessage(`{"url": "x"}`), Every: time.Minute})
	if !near(a.NextRunAt, time.Now(), 5*time.Second) || a.Every != time.Minute || !jsonEqual(a.Payload, []byte(`{"url":"x"}`)) {
		e.t.Fatalf("upsert: %+v", a)
	}
	a = up(driver.Schedule{Key: "a", Kind: "crawl", Queue: "default", Every: time.Hour, NextRunAt: time.Now().Add(-time.Minute)})
	if a.Every != time.Hour || !a.CreatedAt.Before(a.UpdatedAt) && !a.CreatedAt.Equal(a.UpdatedAt) {
		e.t.Fatalf("update: %+v", a)
	}
	up(driver.Schedule{Key: "b", Tenant: "t1", Kind: "crawl", Queue: "default", Every: time.Hour, NextRunAt: time.Now().Add(time.Hour)})
	up(driver.Schedule{Key: "c", Tenant: "t1", Kind: "crawl", Queue: "default", Every: time.Hour, NextRunAt: time.Now().Add(-time.Second)})
	all, err := e.schedules().ScheduleList(e.ctx, nil)
	if err != nil || len(all) != 3 || all[0].Key != "a" || all[1].Key != "b" {
		e.t.Fatalf("list: %v, %v", all, err)
	}
	t1 := "t1"
	if got, err := e.schedules().ScheduleList(e.ctx, &t1); err != nil || len(got) != 2 {
		e.t.Fatalf("list t1: %v, %v", got, err)
	}
	// Concurrent enqueuers: each due schedule goes to one of them.
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			tx, err := e.d.Begin(e.ctx)
			if err != nil {
				e.t.Error(err)
				return
			}
			defer func() { _ = tx.Rollback(context.Background()) }()
			due, err := need[driver.ScheduleStore](e, tx).ScheduleDue(e.ctx, 10)
			if err != nil {
				e.t.Error(err)
				return
			}
			for _, s := range due {
				if err := need[driver.ScheduleStore](e, tx).ScheduleAdvance(e.ctx, s.Tenant, s.Key, time.Now().Add(s.Every)); err != nil {
					e.t.Error(err)
					return
				}
				taken.Add(1)
			}
			if err := tx.Commit(e.ctx); err != nil {
				e.t.Error(err)
			}
		})
	}
	wg.Wait()
	if taken.Load() != 2 {
		e.t.Fatalf("due schedules taken %d times, want 2 (a and c, once each)", taken.Load())
	}
	if due, err := e.schedules().ScheduleDue(e.ctx, 10); err != nil || len(due) != 0 {
		e.t.Fatalf("due after advancing: %v, %v", due, err)
	}
	if err := e.schedules().ScheduleDelete(e.ctx, "t1", "b"); err != nil {
		e.t.Fatal(err)
	}
	e.wantErr(e.schedules().ScheduleDelete(e.ctx, "t1", "b"), driver.ErrNotFound, "delete a deleted schedule")
})

var _ = add("Tokens", func(e *env) {
	if n, err := e.tokens().TokenCount(e.ctx); err != nil || n != 0 {
		e.t.Fatalf("count: %d, %v", n, err)
	}
	a, err := e.tokens().TokenCreate(e.ctx, &driver.Token{Name: "ci", Hash: "h1", Role: "producer", Tenant: "acme"})
	if err != nil || a.ID == 0 || a.CreatedAt.IsZero() || a.Role != "producer" || a.Tenant != "acme" {
		e.t.Fatalf("create: %+v, %v", a, err)
	}
	if _, err := e.tokens().TokenCreate(e.ctx, &driver.Token{Name: "dup", Hash: "h1", Role: "viewer"}); err == nil {
		e.t.Fatal("two tokens with one hash")
	}
	b, err := e.tokens().TokenCreate(e.ctx, &driver.Token{Name: "admin", Hash: "h2", Role: "admin"})
	if err != nil {
		e.t.Fatal(err)
	}
	if got, err := e.tokens().TokenByHash(e.ctx, "h1"); err != nil || got.ID != a.ID || got.Name != "ci" {
		e.t.Fatalf("by hash: %+v, %v", got, err)
	}
	_, err = e.tokens().TokenByHash(e.ctx, "nope")
	e.wantErr(err, driver.ErrNotFound, "unknown hash")
	list, err := e.tokens().TokenList(e.ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		e.t.Fatalf("list: %v, %v", list, err)
	}
	if err := e.tokens().TokenDelete(e.ctx, a.ID); err != nil {
		e.t.Fatal(err)
	}
	e.wantErr(e.tokens().TokenDelete(e.ctx, a.ID), driver.ErrNotFound, "delete a deleted token")
	if n, _ := e.tokens().TokenCount(e.ctx); n != 1 {
		e.t.Fatalf("count after delete: %d", n)
	}
})

var _ = add("MigrationsDownUp", func(e *env) {
	m := e.d.Migrator()
	st, err := m.Status(e.ctx)
	if err != nil || len(st) < 2 {
		e.t.Fatalf("status: %v, %v", st, err)
	}
	for _, s := range st {
		if s.Applied == nil {
			e.t.Fatalf("migration %d not applied", s.Version)
		}
	}
	down, err := m.Down(e.ctx, 0)
	if err != nil || len(down) != 1 || down[0].Version != st[len(st)-1].Version {
		e.t.Fatalf("down one: %v, %v", down, err)
	}
	down, err = m.Down(e.ctx, len(st))
	if err != nil || len(down) != len(st)-1 {
		e.t.Fatalf("down all: %v, %v", down, err)
	}
	if again, err := m.Down(e.ctx, 1); err != nil || len(again) != 0 {
		e.t.Fatalf("down with nothing applied: %v, %v", again, err)
	}
	st, _ = m.Status(e.ctx)
	for _, s := range st {
		if s.Applied != nil {
			e.t.Fatalf("migration %d still applied", s.Version)
		}
	}
	up, err := m.Up(e.ctx, 1)
	if err != nil || len(up) != 1 || up[0].Version != st[0].Version {
		e.t.Fatalf("up one: %v, %v", up, err)
	}
	up, err = m.Up(e.ctx, 0)
	if err != nil || len(up) != len(st)-1 {
		e.t.Fatalf("up all: %v, %v", up, err)
	}
	if again, err := m.Up(e.ctx, 0); err != nil || len(again) != 0 {
		e.t.Fatalf("up with nothing pending: %v, %v", again, err)
	}
	j := e.claimID(e.insert(job("a")), "w1", lease)
	e.complete(j, "")
	if _, err := e.tokens().TokenCreate(e.ctx, &driver.Token{Hash: "h", Role: "admin"}); err != nil {
		e.t.Fatal(err)
	}
})

var _ = add("NotifierDeliversWakeUpsAndCancels", func(e *env) {
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	inserts, cancels := make(chan string, 100), make(chan int64, 100)
	done := make(chan error, 1)
	go func() {
		done <- e.d.Notifier().Listen(ctx, func(q string) { inserts <- q }, func(id int64) { cancels <- id })
	}()
	// Once listening, it wakes every queue: what was inserted before it
	// listened woke nobody.
	select {
	case q := <-inserts:
		if q != "" {
			e.t.Fatalf("first wake-up %q, want \"\" (every queue)", q)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatal("the listener never said it listens")
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	var gotQueue, gotCancel bool
	for !gotQueue || !gotCancel {
		select {
		case q := <-inserts:
			gotQueue = gotQueue || q == "media"
		case id := <-cancels:
			gotCancel = gotCancel || id == 42
		case <-tick.C:
			if err := e.d.QueueNotify(e.ctx, []string{"media"}); err != nil {
				e.t.Fatal(err)
			}
			if err := e.d.Notifier().NotifyCancel(e.ctx, 42); err != nil {
				e.t.Fatal(err)
			}
		case <-deadline:
			e.t.Fatalf("listener heard queue %v, cancel %v", gotQueue, gotCancel)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		e.t.Fatal("Listen did not return after its context ended")
	}
})
