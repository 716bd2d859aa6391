package skiplock

import (
	"context"
	"errors"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Kinds of Process.
const (
	// ProcessClient is a started Client: a worker of queues, or a server
	// that external workers claim through.
	ProcessClient = "client"
	// ProcessHTTPWorker is a worker id that holds jobs it claimed over
	// HTTP (skiplock serve); it is known by its running jobs only.
	ProcessHTTPWorker = "http_worker"
)

// Process is a process working on the database: a started Client, or a
// worker that claimed jobs through the server's HTTP API.
type Process struct {
	ID   string
	Kind string
	// Host, PID, Version, Queues and StartedAt are known for a Client
	// only: an HTTP worker is known by the jobs it holds.
	Host      string
	PID       int
	Version   string
	Queues    []string
	StartedAt time.Time
	// HeartbeatAt is a Client's last beat, or the newest heartbeat (or
	// start) of an HTTP worker's running jobs.
	HeartbeatAt time.Time
	// Jobs are the jobs it runs now, newest first.
	Jobs []*JobRow
}

// Processes is what ProcessList answers.
type Processes struct {
	Processes []*Process
	// Running counts the running jobs read; Capped is true when there
	// were more than MaxJobListLimit and some workers may be missing.
	Running int
	Capped  bool
}

// processStale is how old a client's beat may be before the client is
// taken for dead: a few of its elector's ticks (every LeaderTTL/3), and at
// least a minute, so that a client with a short LeaderTTL does not drop
// the row of one that beats less often.
func (c *Client) processStale() time.Duration { return max(4*c.config.LeaderTTL, time.Minute) }

// ProcessList answers the clients started on the database (whose beat is
// fresh) and the HTTP workers holding running jobs, each with its running
// jobs; clients first, then HTTP workers, each by id.
func (c *Client) ProcessList(ctx context.Context) (*Processes, error) {
	st, err := driver.As[driver.ProcessStore](c.driver)
	if err != nil {
		return nil, err
	}
	registered, err := st.ProcessList(ctx, c.processStale())
	if err != nil {
		return nil, err
	}
	running, err := c.JobList(ctx, JobListParams{States: []JobState{StateRunning}, Limit: MaxJobListLimit})
	if err != nil {
		return nil, err
	}
	out := &Processes{Running: len(running), Capped: len(running) == MaxJobListLimit}
	byID := map[string]*Process{}
	for _, p := range registered {
		pr := &Process{ID: p.ID, Kind: ProcessClient, Host: p.Host, PID: p.PID, Version: p.Version,
			Queues: p.Queues, StartedAt: p.StartedAt, HeartbeatAt: p.HeartbeatAt}
		byID[p.ID] = pr
		out.Processes = append(out.Processes, pr)
	}
	var workers []*Process
	for _, j := range running {
		pr := byID[j.WorkerID]
		if pr == nil {
			pr = &Process{ID: j.WorkerID, Kind: ProcessHTTPWorker}
			byID[j.WorkerID] = pr
			workers = append(workers, pr)
		}
		pr.Jobs = append(pr.Jobs, j)
		if pr.Kind == ProcessHTTPWorker {
			for _, at := range []*time.Time{j.StartedAt, j.HeartbeatAt} {
				if at != nil && at.After(pr.HeartbeatAt) {
					pr.HeartbeatAt = *at
				}
			}
		}
	}
	sort.Slice(workers, func(i, k int) bool { return workers[i].ID < workers[k].ID })
	out.Processes = append(out.Processes, workers...)
	return out, nil
}

// beatProcess records this client in the processes table; it rides on
// the elector's tick and a failure is logged, never fatal.
func (c *Client) beatProcess(ctx context.Context) {
	st, err := driver.As[driver.ProcessStore](c.driver)
	if err != nil {
		return
	}
	if err := st.ProcessBeat(ctx, c.process(), c.processStale()); err != nil && !errors.Is(err, context.Canceled) {
		c.log.Warn("record process", "error", err)
	}
}

// process is this client's row.
func (c *Client) process() *driver.Process {
	host, _ := os.Hostname()
	queues := make([]string, 0, len(c.config.Queues))
	for name := range c.config.Queues {
		queues = append(queues, name)
	}
	slices.Sort(queues)
	return &driver.Process{ID: c.config.ID, Host: host, PID: os.Getpid(), Version: Version(),
		Queues: queues, StartedAt: c.startedAt}
}

// forgetProcess deletes this client's row as it stops.
func (c *Client) forgetProcess(ctx context.Context) {
	st, err := driver.As[driver.ProcessStore](c.driver)
	if err != nil {
		return
	}
	if err := st.ProcessDelete(ctx, c.config.ID); err != nil {
		c.log.Warn("forget process", "error", err)
	}
}
