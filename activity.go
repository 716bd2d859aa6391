package skiplock

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/maintenance"
)

// Activity is the recent work of every queue: jobs finished per bucket by
// state, and the jobs and workers running now.
type Activity struct {
	Since  time.Time        `json:"since"`
	Bucket time.Duration    `json:"-"`
	Series []ActivityBucket `json:"series"`
	// Running counts running jobs; RunningWorkers the distinct workers
	// holding them.
	Running        int64 `json:"running"`
	RunningWorkers int64 `json:"running_workers"`
}

// ActivityBucket is the jobs finished in one bucket, by final state.
type ActivityBucket struct {
	Start     time.Time `json:"start"`
	Completed int64     `json:"completed"`
	Failed    int64     `json:"failed"`
	Cancelled int64     `json:"cancelled"`
}

// Totals adds up the buckets.
func (a *Activity) Totals() ActivityBucket {
	var t ActivityBucket
	for _, b := range a.Series {
		t.Completed += b.Completed
		t.Failed += b.Failed
		t.Cancelled += b.Cancelled
	}
	return t
}

// Activity answers the jobs finished over the last window in buckets of
// bucket (oldest first, every bucket present), and the running jobs.
func (c *Client) Activity(ctx context.Context, window, bucket time.Duration) (*Activity, error) {
	if window <= 0 || window > 31*24*time.Hour {
		return nil, invalid("window", "must be between 1ns and 31 days, got %s", window)
	}
	if bucket <= 0 || window/bucket > 10000 {
		return nil, invalid("bucket", "must be positive and split the window in at most 10000 buckets, got %s", bucket)
	}
	n := int((window + bucket - 1) / bucket)
	since := time.Now().Truncate(bucket).Add(bucket - time.Duration(n)*bucket)
	got, err := c.driver.JobActivity(ctx, since, bucket)
	if err != nil {
		return nil, err
	}
	a := &Activity{Since: since, Bucket: bucket, Series: make([]ActivityBucket, n),
		Running: got.Running, RunningWorkers: got.RunningWorkers}
	for i := range a.Series {
		a.Series[i].Start = since.Add(time.Duration(i) * bucket).UTC()
	}
	for _, f := range got.Finished {
		if f.Bucket < 0 || f.Bucket >= n {
			continue // finished this instant, past the last bucket's end
		}
		b := &a.Series[f.Bucket]
		switch f.State {
		case driver.StateCompleted:
			b.Completed += f.N
		case driver.StateFailed:
			b.Failed += f.N
		case driver.StateCancelled:
			b.Cancelled += f.N
		}
	}
	return a, nil
}

// PeriodicInfo is a configured periodic job and its next tick.
type PeriodicInfo struct {
	Name     string    `json:"name"`
	Schedule string    `json:"schedule"`
	Kind     string    `json:"kind"`
	Queue    string    `json:"queue"`
	NextRun  time.Time `json:"next_run"`
	CatchUp  bool      `json:"catch_up"`
}

// Periodic lists the client's periodic jobs with the tick after now.
func (c *Client) Periodic(now time.Time) []PeriodicInfo {
	out := make([]PeriodicInfo, 0, len(c.config.PeriodicJobs))
	for _, pj := range c.config.PeriodicJobs {
		sched, _ := maintenance.ParseCron(pj.Schedule) // validated by NewClient
		queue := DefaultQueue
		if pj.Opts != nil && pj.Opts.Queue != "" {
			queue = pj.Opts.Queue
		}
		out = append(out, PeriodicInfo{Name: pj.Name, Schedule: pj.Schedule, Kind: pj.args().Kind(),
			Queue: queue, NextRun: sched.Next(now), CatchUp: pj.CatchUp})
	}
	return out
}
