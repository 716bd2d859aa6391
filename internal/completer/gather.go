package completer

import "sync"

// Gather runs concurrent calls that can share one statement as one: while
// a run for a key is under way, the calls that arrive for that key wait,
// and the next run takes as many of them as fit. An idle key runs a call at
// once, alone; under load, runs grow (group commit). Its zero value is
// ready; keys with nothing running are forgotten.
type Gather[K comparable, T any] struct {
	mu   sync.Mutex
	busy map[K]*line[T]
}

// line is a key's calls waiting while one of its runs is under way.
type line[T any] struct {
	waiting []*call[T]
}

type call[T any] struct {
	v T
	// told answers the call: lead (run the next batch), or the outcome of
	// the run that took it (panicked when that run panicked). A call of Go
	// has none: it leads on a goroutine of its own, with its fits and run.
	told chan word
	fits func(batch []T, w T) bool
	run  func(batch []T)
}

type word struct {
	lead     bool
	panicked any
}

// Do runs v, with the calls waiting under key that fit, in one call of run,
// and returns when that run has returned. fits(batch, w) tells whether
// waiting value w may join batch (batch[0] is the run's first value; it
// is called under Gather's lock and must be quick). run gets the batch in
// order and writes each value's outcome into it (T is a pointer). A run
// that panics panics in every call it took.
func (g *Gather[K, T]) Do(key K, v T, fits func(batch []T, w T) bool, run func(batch []T)) {
	g.mu.Lock()
	if g.busy == nil {
		g.busy = map[K]*line[T]{}
	}
	if l, ok := g.busy[key]; ok {
		c := &call[T]{v: v, told: make(chan word, 1)}
		l.waiting = append(l.waiting, c)
		g.mu.Unlock()
		w := <-c.told
		if w.panicked != nil {
			panic(w.panicked)
		}
		if !w.lead {
			return
		}
	} else {
		g.busy[key] = &line[T]{}
		g.mu.Unlock()
	}
	g.lead(key, v, fits, run)
}

// Go is Do that does not wait: v joins the next run of key, or, when none
// is under way, runs at once on a goroutine of its own. run tells v's
// outcome as it tells Do's.
func (g *Gather[K, T]) Go(key K, v T, fits func(batch []T, w T) bool, run func(batch []T)) {
	g.mu.Lock()
	if g.busy == nil {
		g.busy = map[K]*line[T]{}
	}
	if l, ok := g.busy[key]; ok {
		l.waiting = append(l.waiting, &call[T]{v: v, fits: fits, run: run})
		g.mu.Unlock()
		return
	}
	g.busy[key] = &line[T]{}
	g.mu.Unlock()
	go g.lead(key, v, fits, run)
}

// lead runs v and the waiting calls that fit, then hands the key to the
// first call still waiting, or frees it.
func (g *Gather[K, T]) lead(key K, v T, fits func(batch []T, w T) bool, run func(batch []T)) {
	batch := []T{v}
	var taken []*call[T]
	g.mu.Lock()
	l := g.busy[key]
	left := l.waiting[:0]
	for _, c := range l.waiting {
		if fits(batch, c.v) {
			batch = append(batch, c.v)
			taken = append(taken, c)
			continue
		}
		left = append(left, c)
	}
	clear(l.waiting[len(left):])
	l.waiting = left
	g.mu.Unlock()

	finished := false
	defer func() {
		var p any
		if !finished {
			p = recover()
		}
		for _, c := range taken {
			if c.told != nil {
				c.told <- word{panicked: p}
			}
		}
		g.handOn(key)
		if p != nil {
			panic(p)
		}
	}()
	run(batch)
	finished = true
}

// handOn makes the first waiting call of key the next leader, or forgets
// the key when none waits.
func (g *Gather[K, T]) handOn(key K) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.busy[key]
	if len(l.waiting) == 0 {
		delete(g.busy, key)
		return
	}
	next := l.waiting[0]
	l.waiting[0] = nil
	l.waiting = l.waiting[1:]
	if next.told == nil {
		go g.lead(key, next.v, next.fits, next.run)
		return
	}
	next.told <- word{lead: true}
}

// Waiting answers how many calls of key wait for a run, and whether one
// runs.
func (g *Gather[K, T]) Waiting(key K) (n int, running bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l, ok := g.busy[key]
	if !ok {
		return 0, false
	}
	return len(l.waiting), true
}
