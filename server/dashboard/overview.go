package dashboard

import (
	"errors"
	"html/template"
	"net/http"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
)

type queueRow struct {
	Name             string
	Paused           bool
	Counts           map[skiplock.JobState]int64
	Live             int64
	OldestPendingAge time.Duration
	Bar              template.HTML
}

type overviewData struct {
	Queues         []queueRow
	Chart          template.HTML
	Totals         skiplock.ActivityBucket
	Finished       int64
	Running        int64
	RunningWorkers int64
	Pending        int64
	OldestPending  time.Duration
}

// overview answers the queues' depth by state, the last hour's throughput
// and failures, the oldest pending job and the running workers. It counts
// every tenant, so a tenant-scoped token is shown its jobs instead.
func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request, v *view) error {
	if v.P.Scoped {
		http.Redirect(w, r, "/jobs", http.StatusSeeOther)
		return nil
	}
	data, err := d.loadOverview(r)
	if err != nil {
		return err
	}
	v.Page, v.Title, v.Data = "overview", "Overview", data
	d.render(w, "overview", v)
	return nil
}

// loadOverview reads the queues and the activity at the same time: each is
// one statement, and the page waits for the slower.
func (d *Dashboard) loadOverview(r *http.Request) (*overviewData, error) {
	var queues []skiplock.QueueInfo
	var act *skiplock.Activity
	var qerr, aerr error
	var wg sync.WaitGroup
	wg.Go(func() { queues, qerr = d.client.QueueList(r.Context(), false) })
	wg.Go(func() { act, aerr = d.client.Activity(r.Context(), time.Hour, time.Minute) })
	wg.Wait()
	if err := errors.Join(qerr, aerr); err != nil {
		return nil, err
	}
	out := &overviewData{Chart: activityChart(act), Totals: act.Totals(), Running: act.Running,
		RunningWorkers: act.RunningWorkers}
	out.Finished = out.Totals.Completed + out.Totals.Failed + out.Totals.Cancelled
	var peak int64
	for _, q := range queues {
		row := queueRow{Name: q.Name, Paused: q.Paused, Counts: q.Counts, OldestPendingAge: q.OldestPendingAge}
		for _, st := range liveStates {
			row.Live += q.Counts[st]
		}
		peak = max(peak, row.Live)
		out.Pending += q.Counts[skiplock.StatePending]
		out.OldestPending = max(out.OldestPending, q.OldestPendingAge)
		out.Queues = append(out.Queues, row)
	}
	for i := range out.Queues {
		out.Queues[i].Bar = depthBar(out.Queues[i].Counts, peak)
	}
	return out, nil
}
