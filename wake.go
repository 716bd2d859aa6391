package skiplock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// notifyDebounce is the least time between two wake-ups of one queue from
// this process. A wake-up is also never sent while this process's last one
// for the queue is on its way: it is held back until that one returns, so
// that a stream of inserts never queues its commits on NOTIFY's lock, and a
// bulk of inserts sends one. A job inserted just after a wake-up went out
// waits for its own about one commit's time.
const notifyDebounce = 100 * time.Microsecond

// notifyInTxSpacing is the least time between two wake-ups of one queue
// sent in callers' transactions (InsertTx). Such a wake-up goes out at the
// caller's commit, holding NOTIFY's lock while that commit waits for the
// disk, and this process cannot see it return: spaced by notifyDebounce,
// concurrent transactions committed one at a time (InsertTx from 32
// goroutines: 2,700-3,000 against 5,100-5,400 a second).
const notifyInTxSpacing = time.Millisecond

// spacing is the least time between two wake-ups of one queue, for a
// committed insert or one in a caller's transaction.
func spacing(committed bool) time.Duration {
	if committed {
		return notifyDebounce
	}
	return notifyInTxSpacing
}

// notifyTimeout bounds one wake-up's round trip.
const notifyTimeout = 5 * time.Second

// waker sends wake-ups for inserted jobs to idle workers, here and in other
// processes.
type waker struct {
	driver driver.Driver
	local  func(queue string)
	now    func() time.Time // time.Now; a test's clock

	mu       sync.Mutex
	lastSent map[string]time.Time
	// trailing holds the wake-up of each queue due when its debounce ends.
	trailing map[string]*time.Timer
	// onWay holds the queues whose committed wake-up is on its way; owed,
	// those whose next wake-up goes once it has returned (pending counts
	// it).
	onWay map[string]bool
	owed  map[string]bool
	// pending counts wake-ups on their way or trailing; idle, when not nil,
	// is closed when it falls to zero.
	pending int
	idle    chan struct{}
	// sendCtx is the context of sends on their way; flush cancels it when
	// its caller stops waiting.
	sendCtx    context.Context
	cancelSend context.CancelFunc
}

func newWaker(d driver.Driver, local func(string)) *waker {
	w := &waker{driver: d, local: local, now: time.Now, lastSent: map[string]time.Time{}, trailing: map[string]*time.Timer{},
		onWay: map[string]bool{}, owed: map[string]bool{}}
	w.sendCtx, w.cancelSend = context.WithCancel(context.Background())
	return w
}

// maxLastSent is how many queues' last wake-ups the waker keeps before it
// forgets those older than notifyDebounce (which count as never sent).
const maxLastSent = 1024

// forgetOld keeps lastSent from growing with every queue name ever used.
// w.mu is held.
func (w *waker) forgetOld(now time.Time) {
	if len(w.lastSent) <= maxLastSent {
		return
	}
	for q, at := range w.lastSent {
		if now.Sub(at) >= notifyDebounce {
			delete(w.lastSent, q)
		}
	}
}

// insertDone is told of inserted jobs. Committed inserts wake this process's
// workers at once; the others hear through the database (at commit, when
// exec is the caller's transaction). A wake-up that fails in the caller's
// transaction is answered: that transaction may be unusable now.
func (w *waker) insertDone(exec driver.Executor, queues []string, committed bool) error {
	if committed {
		for _, q := range queues {
			w.local(q)
		}
	}
	now := w.now()
	var send []string
	w.mu.Lock()
	for _, q := range queues {
		switch {
		case w.trailing[q] != nil || w.owed[q]:
		case committed && w.onWay[q]:
			w.owed[q] = true
			w.pending++
		case now.Sub(w.lastSent[q]) >= spacing(committed):
			w.lastSent[q] = now
			send = append(send, q)
		default:
			w.pending++
			w.trailing[q] = time.AfterFunc(trailingIn(now, w.lastSent[q], spacing(committed)), func() { w.sendTrailing(q) })
		}
	}
	if committed && len(send) > 0 {
		w.pending++
		for _, q := range send {
			w.onWay[q] = true
		}
	}
	w.forgetOld(now)
	w.mu.Unlock()
	switch {
	case len(send) == 0:
	case committed:
		// Off the insert's path: the caller need not wait a round trip for
		// other processes' wake-up. flush waits for it.
		go w.sendCounted(send)
	default:
		// In the caller's transaction, so that it goes out at commit.
		if err := w.send(exec, send); err != nil {
			return fmt.Errorf("wake workers of queues %v: %w", send, err)
		}
	}
	return nil
}

// takeDue answers whether queue's wake-up is due now (its debounce since
// the last one has passed, none is on its way or held back), and counts it
// on its way: the caller sends it with the job it inserts
// (InsertParams.Wake), and tells carried how that went.
func (w *waker) takeDue(queue string) bool {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.trailing[queue] != nil || w.onWay[queue] || now.Sub(w.lastSent[queue]) < notifyDebounce {
		return false
	}
	w.lastSent[queue] = now
	w.onWay[queue] = true
	w.forgetOld(now)
	return true
}

// carried is told of an insert whose wake-up takeDue counted on its way:
// once inserted, this process's workers wake at once, and the others
// through the database, unless the insert carried the wake-up itself
// (woken).
func (w *waker) carried(queue string, inserted, woken bool) {
	if inserted {
		w.local(queue)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if inserted && !woken {
		w.pending++
		go w.sendCounted([]string{queue})
		return
	}
	w.returned(queue)
}

// returned is told that queue's wake-up on its way has returned: one held
// back meanwhile goes now. w.mu is held.
func (w *waker) returned(queue string) {
	delete(w.onWay, queue)
	if !w.owed[queue] {
		return
	}
	delete(w.owed, queue)
	w.lastSent[queue] = w.now()
	w.onWay[queue] = true
	go w.sendCounted([]string{queue}) // the count pending took for owed
}

// send notifies; a lost wake-up costs latency, not jobs: polling finds them.
func (w *waker) send(exec driver.Executor, queues []string) error {
	w.mu.Lock()
	parent := w.sendCtx
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(parent, notifyTimeout)
	defer cancel()
	return exec.QueueNotify(ctx, queues)
}

// sendCounted sends a wake-up of queues on their way (onWay) that pending
// counts, and uncounts it.
func (w *waker) sendCounted(queues []string) {
	_ = w.send(w.driver, queues) // outside any transaction: polling covers a loss
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, q := range queues {
		w.returned(q)
	}
	if w.pending--; w.pending == 0 && w.idle != nil {
		close(w.idle)
		w.idle = nil
	}
}

// trailingIn is when a wake-up held back by the spacing goes out: as the
// spacing since the last send ends, not a whole spacing from now, so that
// a steady stream of inserts waits at most one spacing for its wake-up.
func trailingIn(now, lastSent time.Time, spacing time.Duration) time.Duration {
	return spacing - now.Sub(lastSent)
}

func (w *waker) sendTrailing(q string) {
	w.mu.Lock()
	delete(w.trailing, q)
	w.lastSent[q] = w.now()
	w.onWay[q] = true
	w.mu.Unlock()
	w.sendCounted([]string{q})
}

// flush sends at once the wake-ups waiting out their debounce and waits,
// until ctx ends, for every wake-up on its way: a producer that stops right
// after inserting must not take its inserts' wake-ups with it (workers
// elsewhere would sleep until their next poll). When ctx ends first, the
// sends still on their way are cancelled.
func (w *waker) flush(ctx context.Context) error {
	w.mu.Lock()
	var due []string
	for q, t := range w.trailing {
		if t.Stop() { // else its send has begun, and pending counts it
			delete(w.trailing, q)
			w.lastSent[q] = w.now()
			w.onWay[q] = true
			due = append(due, q)
		}
	}
	if len(due) > 0 {
		w.pending -= len(due) - 1 // each was counted when its timer was set; one send goes
	}
	if w.pending == 0 {
		w.mu.Unlock()
		return nil
	}
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	idle := w.idle
	w.mu.Unlock()
	if len(due) > 0 {
		go w.sendCounted(due)
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		w.mu.Lock()
		w.cancelSend()
		w.sendCtx, w.cancelSend = context.WithCancel(context.Background())
		w.mu.Unlock()
		return fmt.Errorf("send wake-ups of inserted jobs: %w", ctx.Err())
	}
}
