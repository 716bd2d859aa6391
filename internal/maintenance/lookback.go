package maintenance

import "time"

// lookback bounds a periodic pass over an index of due rows (expired leases,
// due scheduled jobs) to the rows that became due since the previous pass,
// less lookbackMargin. Rows that left that state leave their entries in the
// index until vacuum, and a long transaction elsewhere holds vacuum off: a
// pass from the index's start would walk millions of them each time. The
// first pass looks at everything, and so does a pass once fullPassEvery
// passes and 20 times the last full pass's duration have gone by; it finds
// what a bounded pass can miss (a row another statement had locked when it
// became due).
type lookback struct {
	since    time.Time // rows due before this were looked at
	passes   int       // since the last full pass
	lastFull time.Time
	fullCost time.Duration
	started  bool
}

const (
	fullPassEvery  = 30
	lookbackMargin = 10 * time.Second
)

// run makes one pass: batch handles up to limit rows due since the bound
// and answers how many it handled and the database's clock; batches repeat
// until one comes back short.
func (l *lookback) run(limit int, batch func(since time.Time) (int, time.Time, error)) error {
	since, full := l.pass()
	start := time.Now()
	for {
		n, dbNow, err := batch(since)
		if err != nil {
			return err
		}
		if n < limit {
			l.done(full, start, dbNow)
			return nil
		}
	}
}

// pass answers the bound of the next pass (zero: everything) and whether it
// is a full pass.
func (l *lookback) pass() (since time.Time, full bool) {
	full = !l.started || l.passes >= fullPassEvery && time.Since(l.lastFull) >= 20*l.fullCost
	if full {
		return time.Time{}, true
	}
	return l.since, false
}

// done records a pass that went through, begun at start, whose database
// clock read dbNow.
func (l *lookback) done(full bool, start, dbNow time.Time) {
	l.since, l.passes, l.started = dbNow.Add(-lookbackMargin), l.passes+1, true
	if full {
		l.passes, l.lastFull, l.fullCost = 0, time.Now(), time.Since(start)
	}
}
