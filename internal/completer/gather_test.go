package completer

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// op is a value that records the run that took it.
type op struct {
	n   int
	run int
}

// recorder runs batches, optionally held until released, and records them.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	hold    chan struct{} // when set, the run of value 1 waits on it
}

func (r *recorder) run(batch []*op) {
	if r.hold != nil && batch[0].n == 1 {
		<-r.hold
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var ns []int
	for _, o := range batch {
		ns = append(ns, o.n)
		o.run = len(r.batches) + 1
	}
	r.batches = append(r.batches, ns)
}

func all(batch []*op, w *op) bool { return true }

// waitWaiting waits until key has a run under way and n calls waiting
// behind it.
func waitWaiting[K comparable, T any](t *testing.T, g *Gather[K, T], key K, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, running := g.Waiting(key)
		if !running {
			got = -1
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("key %v: %d calls waiting, want %d", key, got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// heldRun starts a call of value 1 under key "a" whose run waits until
// release is called, and returns once that run is under way.
func heldRun(t *testing.T, g *Gather[string, *op], fits func([]*op, *op) bool) (r *recorder, wg *sync.WaitGroup, release func()) {
	t.Helper()
	hold := make(chan struct{})
	r, wg = &recorder{hold: hold}, &sync.WaitGroup{}
	wg.Go(func() { g.Do("a", &op{n: 1}, fits, r.run) })
	waitWaiting(t, g, "a", 0)
	return r, wg, func() { close(hold) }
}

func TestAnIdleKeyRunsACallAlone(t *testing.T) {
	var g Gather[string, *op]
	r := &recorder{}
	for i := 1; i <= 3; i++ {
		o := &op{n: i}
		g.Do("a", o, all, r.run)
		if o.run != i {
			t.Fatalf("call %d ran in run %d", i, o.run)
		}
	}
	if want := [][]int{{1}, {2}, {3}}; !slices.EqualFunc(r.batches, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", r.batches, want)
	}
	if len(g.busy) != 0 {
		t.Fatalf("%d keys kept after their runs", len(g.busy))
	}
}

func TestCallsThatWaitRunTogether(t *testing.T) {
	var g Gather[string, *op]
	r, wg, release := heldRun(t, &g, all)
	ops := []*op{{n: 2}, {n: 3}, {n: 4}}
	for i, o := range ops {
		wg.Go(func() { g.Do("a", o, all, r.run) })
		waitWaiting(t, &g, "a", i+1)
	}
	release()
	wg.Wait()
	if want := [][]int{{1}, {2, 3, 4}}; !slices.EqualFunc(r.batches, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", r.batches, want)
	}
	for _, o := range ops {
		if o.run != 2 {
			t.Fatalf("call %d ran in run %d, want 2", o.n, o.run)
		}
	}
}

func TestACallThatDoesNotFitWaitsForTheNextRun(t *testing.T) {
	var g Gather[string, *op]
	// A batch holds values summing to at most 5.
	fits := func(batch []*op, w *op) bool {
		sum := w.n
		for _, b := range batch {
			sum += b.n
		}
		return sum <= 5
	}
	r, wg, release := heldRun(t, &g, fits)
	for i, n := range []int{2, 4, 3, 1} {
		wg.Go(func() { g.Do("a", &op{n: n}, fits, r.run) })
		waitWaiting(t, &g, "a", i+1)
	}
	release()
	wg.Wait()
	// 2 leads and takes 3 (2+3 = 5); 4 does not fit, nor 1 after 3;
	// 4 leads next and takes 1.
	if want := [][]int{{1}, {2, 3}, {4, 1}}; !slices.EqualFunc(r.batches, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", r.batches, want)
	}
}

func TestKeysDoNotWaitForEachOther(t *testing.T) {
	var g Gather[string, *op]
	r, wg, release := heldRun(t, &g, all)
	b := &op{n: 2}
	g.Do("b", b, all, r.run) // returns while "a" is held
	if b.run != 1 {
		t.Fatalf("key b's call ran in run %d, want 1", b.run)
	}
	release()
	wg.Wait()
}

func TestAPanicReachesEveryCallItTook(t *testing.T) {
	var g Gather[string, *op]
	release := make(chan struct{})
	boom := func(batch []*op) {
		<-release
		panic("boom")
	}
	panicked := make(chan any, 3)
	do := func(o *op) {
		defer func() { panicked <- recover() }()
		g.Do("a", o, all, boom)
	}
	var wg sync.WaitGroup
	wg.Go(func() { do(&op{n: 1}) })
	waitWaiting(t, &g, "a", 0)
	wg.Go(func() { do(&op{n: 2}) })
	waitWaiting(t, &g, "a", 1)
	close(release) // 1 panics alone; 2 leads the next run and panics too
	wg.Wait()
	close(panicked)
	n := 0
	for p := range panicked {
		if p != "boom" {
			t.Fatalf("a call recovered %v, want boom", p)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d calls panicked, want 2", n)
	}
	// The key is free again.
	r := &recorder{}
	o := &op{n: 3}
	g.Do("a", o, all, r.run)
	if o.run != 1 {
		t.Fatalf("after the panics a call ran in run %d, want 1", o.run)
	}
}

func TestATakenCallGetsTheRunsPanic(t *testing.T) {
	var g Gather[string, *op]
	_, wg, release := heldRun(t, &g, all)
	var got [2]any
	boom := func(batch []*op) {
		if len(batch) != 2 {
			panic("the run did not take both waiting calls")
		}
		panic("boom")
	}
	for i := range 2 {
		wg.Go(func() {
			defer func() { got[i] = recover() }()
			g.Do("a", &op{n: i + 2}, all, boom)
		})
		waitWaiting(t, &g, "a", i+1)
	}
	release()
	wg.Wait()
	if got[0] != "boom" || got[1] != "boom" {
		t.Fatalf("the two gathered calls recovered %v and %v, want boom twice", got[0], got[1])
	}
}

func TestGoRunsAtOnceOrJoinsTheNextRun(t *testing.T) {
	var g Gather[string, *op]
	r, wg, release := heldRun(t, &g, all)
	var done sync.WaitGroup
	run := func(batch []*op) {
		r.run(batch)
		for range batch {
			done.Done()
		}
	}
	done.Add(3)
	for i, n := range []int{2, 3, 4} {
		g.Go("a", &op{n: n}, all, run) // returns at once
		waitWaiting(t, &g, "a", i+1)
	}
	release()
	wg.Wait()
	done.Wait()
	done.Add(1)
	g.Go("b", &op{n: 5}, all, run) // an idle key runs on a goroutine of its own
	done.Wait()
	if want := [][]int{{1}, {2, 3, 4}, {5}}; !slices.EqualFunc(r.batches, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", r.batches, want)
	}
}
