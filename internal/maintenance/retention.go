package maintenance

import (
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// RetentionRule keeps the finished jobs of one state, and of one queue
// and/or kind ("" matches any), for Keep; a negative Keep keeps them for
// ever.
type RetentionRule struct {
	State driver.JobState
	Queue string
	Kind  string
	Keep  time.Duration
}

// Policy says how long finished jobs are kept: by state, overridden by the
// most specific rule (queue and kind, then kind, then queue).
type Policy struct {
	// Keep is the default of each finished state; a state missing from it
	// is kept for ever, as is a negative duration.
	Keep  map[driver.JobState]time.Duration
	Rules []RetentionRule
}

// keep answers how long a finished job of state, queue and kind is kept;
// negative: for ever.
func (p Policy) keep(state driver.JobState, queue, kind string) time.Duration {
	best, score := time.Duration(-1), -1
	if d, ok := p.Keep[state]; ok {
		best, score = d, 0
	}
	for _, r := range p.Rules {
		if r.State != state || (r.Queue != "" && r.Queue != queue) || (r.Kind != "" && r.Kind != kind) {
			continue
		}
		s := 0
		if r.Queue != "" {
			s++
		}
		if r.Kind != "" {
			s += 2
		}
		if s > score {
			best, score = r.Keep, s
		}
	}
	return best
}

// expired answers whether a job finished at finished is past retention at now.
func (p Policy) expired(ref driver.ArchivedRef, now time.Time) bool {
	k := p.keep(ref.State, ref.Queue, ref.Kind)
	return k >= 0 && ref.FinishedAt.Before(now.Add(-k))
}

// finite answers the keep of every state and rule that is not for ever.
func (p Policy) finite() []time.Duration {
	var out []time.Duration
	for _, d := range p.Keep {
		out = append(out, d)
	}
	for _, r := range p.Rules {
		out = append(out, r.Keep)
	}
	return slices.DeleteFunc(out, func(d time.Duration) bool { return d < 0 })
}

// shortest answers the shortest keep of any state or rule, and false when
// every job is kept for ever.
func (p Policy) shortest() (time.Duration, bool) {
	if f := p.finite(); len(f) > 0 {
		return slices.Min(f), true
	}
	return 0, false
}

// longest answers the longest keep of any state or rule that is not for
// ever (0 when every job is kept for ever): past it, a day whose every job
// could expire has.
func (p Policy) longest() time.Duration {
	if f := p.finite(); len(f) > 0 {
		return slices.Max(f)
	}
	return 0
}
