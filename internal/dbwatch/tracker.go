// Package dbwatch watches a driver's writes: it maps the database's
// refusals to driver.ErrReadOnly and driver.ErrDiskFull (through the
// driver's ErrorClassifier) and remembers how the latest write went, so
// that a health check tells a database that answers but refuses writes
// from a healthy one.
package dbwatch

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Tracker remembers the outcome of the latest write. Successes are the hot
// path (every claim and completion) and touch only an atomic; refusals are
// rare and take the lock.
type Tracker struct {
	start time.Time // monotonic base of the nanosecond stamps
	// okAt and failAt are stamps (since start) of the latest success and
	// refusal; writes are refused while failAt > okAt.
	okAt, failAt atomic.Int64

	mu    sync.Mutex
	err   error     // the latest refusal
	since time.Time // first refusal of the current run of them
}

// NewTracker answers a tracker that has seen no write yet.
func NewTracker() *Tracker { return &Tracker{start: time.Now()} }

// Status is how writes go.
type Status struct {
	// Err is the latest write's refusal (a *driver.RefusedError), nil when
	// the latest write succeeded or none was seen.
	Err error
	// Since is when the current run of refusals began, At when the latest
	// write (refused or not) was seen; zero when none was.
	Since, At time.Time
}

// Record notes a write's outcome: nil is a success, a refusal a failure;
// other errors (a lost lease, a dropped connection) say nothing about
// whether the database takes writes and are ignored.
func (t *Tracker) Record(err error) {
	if err == nil {
		t.ok()
		return
	}
	var refused *driver.RefusedError
	if !errors.As(err, &refused) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.stamp()
	if t.failAt.Load() <= t.okAt.Load() {
		t.since = t.start.Add(time.Duration(now))
	}
	t.err = refused
	storeMax(&t.failAt, now)
}

func (t *Tracker) ok() {
	now := t.stamp()
	// Within a millisecond of the last success and after any refusal,
	// the stamp would say nothing new: spare the shared cache line.
	if last := t.okAt.Load(); now-last < int64(time.Millisecond) && last > t.failAt.Load() {
		return
	}
	storeMax(&t.okAt, now)
}

// Status answers how the latest write went.
func (t *Tracker) Status() Status {
	ok, fail := t.okAt.Load(), t.failAt.Load()
	latest := max(ok, fail)
	var st Status
	if latest > 0 {
		st.At = t.start.Add(time.Duration(latest))
	}
	if fail > ok {
		t.mu.Lock()
		st.Err, st.Since = t.err, t.since
		t.mu.Unlock()
	}
	return st
}

// stamp is now as nanoseconds since start, never 0.
func (t *Tracker) stamp() int64 { return int64(time.Since(t.start)) + 1 }

// storeMax moves v forward to n; concurrent writers never move it back.
func storeMax(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}
