package skiplock

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/skiplock/skiplock/internal/maintenance"
)

// Defaults of Retention.
const (
	DefaultKeepCompleted   = 7 * 24 * time.Hour
	DefaultKeepFailed      = 30 * 24 * time.Hour
	DefaultKeepCancelled   = 30 * 24 * time.Hour
	DefaultJanitorInterval = maintenance.DefaultJanitorInterval
	DefaultJanitorMaxShare = maintenance.DefaultJanitorMaxShare
	DefaultJanitorFloor    = maintenance.DefaultJanitorFloor
	// KeepForever, as a retention, never deletes the jobs it applies to.
	KeepForever time.Duration = -1
	// DefaultKeepHistory is how long the per-minute history of attempts
	// and queue depth (the dashboard's charts) is kept.
	DefaultKeepHistory = 30 * 24 * time.Hour
)

// Retention says how long finished jobs stay in the archive. The leader
// deletes older ones every Interval (the janitor, docs/retention.md).
type Retention struct {
	// Disabled stops the leader's scheduled runs; `skiplock janitor run`
	// still runs on demand.
	Disabled bool
	// Completed, Failed and Cancelled keep the jobs of each state (default
	// 7, 30 and 30 days); KeepForever keeps them for ever.
	Completed, Failed, Cancelled time.Duration
	// Rules override the state's retention for a queue and/or kind; the
	// most specific rule wins (queue and kind, then kind, then queue).
	Rules []RetentionRule
	// History keeps the per-minute history of attempts and queue depth
	// (default 30 days, at least 1h); KeepForever keeps it.
	History time.Duration
	// Interval is the time between two scheduled runs (default 1h).
	Interval time.Duration
	// MaxShare is the largest share of the archive a run deletes unless
	// forced (default 0.5); runs of 1,000 jobs or fewer are never refused
	// for their share.
	MaxShare float64
	// Floor: a run never deletes a job finished more recently unless
	// forced (default 24h).
	Floor time.Duration
}

// RetentionRule keeps the finished jobs of State in Queue and/or of Kind
// ("" matches any) for Keep.
type RetentionRule struct {
	State JobState
	Queue string
	Kind  string
	Keep  time.Duration
}

func (r Retention) withDefaults() Retention {
	r.Completed = orKeep(r.Completed, DefaultKeepCompleted)
	r.Failed = orKeep(r.Failed, DefaultKeepFailed)
	r.Cancelled = orKeep(r.Cancelled, DefaultKeepCancelled)
	r.History = orKeep(r.History, DefaultKeepHistory)
	r.Interval = orDuration(r.Interval, DefaultJanitorInterval)
	if r.MaxShare == 0 {
		r.MaxShare = DefaultJanitorMaxShare
	}
	r.Floor = orDuration(r.Floor, DefaultJanitorFloor)
	return r
}

func orKeep(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

func (r Retention) validate() error {
	if r.Floor < 0 {
		return fmt.Errorf("config: Retention.Floor: must not be negative (0 takes the default, %s), got %s", DefaultJanitorFloor, r.Floor)
	}
	for name, d := range map[string]time.Duration{"Completed": r.Completed, "Failed": r.Failed, "Cancelled": r.Cancelled} {
		if d < 0 && d != KeepForever {
			return fmt.Errorf("config: Retention.%s: must be positive or KeepForever, got %s", name, d)
		}
		if err := r.aboveFloor("config: Retention."+name, d); err != nil {
			return err
		}
	}
	for i, rule := range r.Rules {
		field := fmt.Sprintf("config: Retention.Rules[%d]", i)
		switch {
		case rule.State != StateCompleted && rule.State != StateFailed && rule.State != StateCancelled:
			return fmt.Errorf("%s.State: must be completed, failed or cancelled, got %q", field, rule.State)
		case rule.Queue == "" && rule.Kind == "":
			return fmt.Errorf("%s: name a Queue or a Kind (the state's own retention is Retention.%s)", field,
				strings.ToUpper(string(rule.State[:1]))+string(rule.State[1:]))
		case rule.Keep == 0 || (rule.Keep < 0 && rule.Keep != KeepForever):
			return fmt.Errorf("%s.Keep: must be positive or KeepForever, got %s", field, rule.Keep)
		}
		if err := r.aboveFloor(field+".Keep", rule.Keep); err != nil {
			return err
		}
	}
	if r.History != KeepForever && r.History < time.Hour {
		return fmt.Errorf("config: Retention.History: must be at least 1h or KeepForever, got %s", r.History)
	}
	if r.MaxShare <= 0 || r.MaxShare > 1 {
		return fmt.Errorf("config: Retention.MaxShare: must be in (0, 1], got %g", r.MaxShare)
	}
	if r.Interval < time.Second {
		return fmt.Errorf("config: Retention.Interval: must be at least 1s, got %s", r.Interval)
	}
	return nil
}

// aboveFloor refuses a retention shorter than the floor: the janitor would
// refuse every run, and the archive would grow for good.
func (r Retention) aboveFloor(field string, d time.Duration) error {
	if r.Disabled || d <= 0 || d >= r.Floor {
		return nil
	}
	return fmt.Errorf("%s: %s is shorter than Retention.Floor (%s), and the janitor would refuse every run: "+
		"lower Floor (retention.floor in a config file) to %s or less, or keep the jobs longer", field, d, r.Floor, d)
}

// policy answers the retention as the janitor's policy.
func (r Retention) policy() maintenance.Policy {
	p := maintenance.Policy{Keep: map[JobState]time.Duration{
		StateCompleted: r.Completed, StateFailed: r.Failed, StateCancelled: r.Cancelled}}
	for _, rule := range r.Rules {
		p.Rules = append(p.Rules, maintenance.RetentionRule{State: rule.State, Queue: rule.Queue,
			Kind: rule.Kind, Keep: rule.Keep})
	}
	return p
}

// ParseKeep reads a retention: a Go duration ("36h", "90m"), a number of
// days ("7d"), or "forever" (KeepForever).
func ParseKeep(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "forever" {
		return KeepForever, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, fmt.Errorf("%q is not a retention (for example 7d, 36h or forever)", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a retention (for example 7d, 36h or forever)", s)
	}
	return d, nil
}
