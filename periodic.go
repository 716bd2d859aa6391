package skiplock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/maintenance"
)

// PeriodicJob is a job enqueued on a cron schedule, once per tick across
// every server sharing the database: the leader enqueues it, and the job's
// idempotency key periodic:{Name}:{tick unix} keeps even two leaders from
// enqueueing a tick twice.
type PeriodicJob struct {
	// Name identifies the job across servers and restarts; unique.
	Name string
	// Schedule is five cron fields ("*/15 * * * *"), a descriptor (@hourly,
	// @daily, @weekly, @monthly, @yearly) or "@every 10m"; evaluated in UTC
	// unless prefixed with CRON_TZ=Zone.
	Schedule string
	// Args is the job; or Kind and Payload for a job without a Go type.
	Args    JobArgs
	Kind    string
	Payload json.RawMessage
	// Opts of each job (queue, priority, tenant, …); its idempotency key is
	// the tick's.
	Opts *InsertOpts
	// CatchUp enqueues the most recent tick missed while no server ran,
	// once; by default missed ticks are skipped.
	CatchUp bool
}

// ParsePeriodic builds a periodic job of a kind and JSON payload, as a
// server's configuration file declares them; it checks what
// Config.PeriodicJobs would.
func ParsePeriodic(name, schedule, kind string, payload json.RawMessage) (PeriodicJob, error) {
	pj := PeriodicJob{Name: name, Schedule: schedule, Kind: kind, Payload: payload}
	if err := pj.check(); err != nil {
		return PeriodicJob{}, err
	}
	return pj, nil
}

// args answers the job of each tick.
func (pj *PeriodicJob) args() JobArgs {
	if pj.Args != nil {
		return pj.Args
	}
	return RawArgs{KindName: pj.Kind, Payload: pj.Payload}
}

func (pj *PeriodicJob) check() error {
	switch {
	case pj.Name == "" || len(pj.Name) > 200:
		return invalid("name", "must be 1 to 200 characters")
	case pj.Args != nil && (pj.Kind != "" || len(pj.Payload) > 0):
		return invalid("args", "set Args, or Kind and Payload, not both")
	case pj.Args == nil && pj.Kind == "":
		return invalid("kind", "must not be empty (set Args, or Kind and Payload)")
	case len(pj.Payload) > 0 && (!json.Valid(pj.Payload) || bytes.TrimSpace(pj.Payload)[0] != '{'):
		return invalid("payload", "must be a JSON object")
	}
	if _, err := maintenance.ParseCron(pj.Schedule); err != nil {
		return invalid("schedule", "%q: %v", pj.Schedule, err)
	}
	opts := InsertOpts{}
	if pj.Opts != nil {
		opts = *pj.Opts
	}
	if len(opts.DependsOn) > 0 {
		return invalid("opts.depends_on", "a periodic job cannot depend on other jobs")
	}
	if err := checkInsertOpts(pj.args().Kind(), &opts); err != nil {
		ve := err.(*ValidationError)
		return invalid("opts."+ve.Field, "%s", ve.Message)
	}
	return nil
}

// validatePeriodic checks Config.PeriodicJobs; errors name the field, e.g.
// "config: PeriodicJobs[1].Schedule: …".
func validatePeriodic(jobs []PeriodicJob) error {
	seen := map[string]int{}
	for i, pj := range jobs {
		if err := pj.check(); err != nil {
			ve := err.(*ValidationError)
			return fmt.Errorf("config: PeriodicJobs[%d].%s: %s", i, fieldName(ve.Field), ve.Message)
		}
		if j, dup := seen[pj.Name]; dup {
			return fmt.Errorf("config: PeriodicJobs[%d].Name: %q is already the name of PeriodicJobs[%d]", i, pj.Name, j)
		}
		seen[pj.Name] = i
	}
	return nil
}

// fieldName turns a validation field ("schedule", "opts.priority") into the
// Go field that holds it ("Schedule", "Opts.Priority").
func fieldName(f string) string {
	parts := strings.Split(f, ".")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, ".")
}

// periodicGrace is how old a tick may be when the leader first sees it and
// still count as due rather than missed: longer than a leader failover.
func (c *Client) periodicGrace() time.Duration {
	return max(maintenance.DefaultPeriodicGrace, 3*c.config.LeaderTTL)
}

// periodicEnqueuer runs the configured periodic jobs under leadership.
func (c *Client) periodicEnqueuer() *maintenance.PeriodicEnqueuer {
	entries := make([]maintenance.PeriodicEntry, len(c.config.PeriodicJobs))
	for i, pj := range c.config.PeriodicJobs {
		sched, _ := maintenance.ParseCron(pj.Schedule) // validated by NewClient
		entries[i] = maintenance.PeriodicEntry{Name: pj.Name, Schedule: sched, CatchUp: pj.CatchUp,
			Params: func(time.Time) (*driver.InsertParams, error) {
				opts := InsertOpts{}
				if pj.Opts != nil {
					opts = *pj.Opts
				}
				return c.insertParams(pj.args(), &opts)
			}}
	}
	return &maintenance.PeriodicEnqueuer{Store: c.driver, Entries: entries, Interval: c.config.SchedulerInterval,
		Grace: c.periodicGrace(), Logger: c.log, OnInsert: c.enqueuedByService}
}

// scheduleEnqueuer enqueues the recurring schedules' jobs under leadership;
// each job goes through the kind's contract and the defaults.
func (c *Client) scheduleEnqueuer() *maintenance.ScheduleEnqueuer {
	return &maintenance.ScheduleEnqueuer{Store: c.driver, Interval: c.config.SchedulerInterval, Logger: c.log,
		OnInsert: c.enqueuedByService,
		Params: func(s *driver.Schedule) (*driver.InsertParams, error) {
			return c.insertParams(RawArgs{KindName: s.Kind, Payload: s.Payload},
				&InsertOpts{Queue: s.Queue, Tenant: s.Tenant})
		}}
}

// enqueuedByService wakes workers, here and elsewhere, for jobs a service
// inserted and committed.
func (c *Client) enqueuedByService(queues []string) {
	c.wake.insertDone(c.driver, queues, true)
}
