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
	Queues []queueRow
	// Range is the history's range (1h, 24h, 7d); Ranges every one.
	Range  string
	Ranges []string
	Charts []namedChart
	Totals skiplock.HistoryPoint
	// Finished counts the attempts that ended the job (all but retried).
	Finished       int64
	Running        int64
	RunningWorkers int64
	Pending        int64
	OldestPending  time.Duration
}

type namedChart struct {
	Title string
	HTML  template.HTML
}

// overview answers the queues' depth by state, the history's charts over
// the range asked for (?range=1h, 24h or 7d), the oldest pending job and
// the running workers. It counts
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

// loadOverview reads the queues, the history and the running jobs at the
// same time, and the page waits for the slowest.
func (d *Dashboard) loadOverview(r *http.Request) (*overviewData, error) {
	rng := r.URL.Query().Get("range")
	if rng == "" {
		rng = "1h"
	}
	var queues []skiplock.QueueInfo
	var act *skiplock.Activity
	var hist *skiplock.History
	var qerr, aerr, herr error
	var wg sync.WaitGroup
	wg.Go(func() { queues, qerr = d.client.QueueList(r.Context(), false) })
	// The running jobs and their workers (the last minute of the archive).
	wg.Go(func() { act, aerr = d.client.Activity(r.Context(), time.Minute, time.Minute) })
	wg.Go(func() { hist, herr = d.client.History(r.Context(), skiplock.HistoryParams{Range: rng}) })
	wg.Wait()
	if err := errors.Join(qerr, aerr, herr); err != nil {
		return nil, err
	}
	out := &overviewData{Range: rng, Totals: hist.Totals(), Running: act.Running, RunningWorkers: act.RunningWorkers}
	for _, r := range skiplock.HistoryRanges {
		out.Ranges = append(out.Ranges, r.Name)
	}
	for _, c := range historyCharts {
		out.Charts = append(out.Charts, namedChart{Title: c.Title, HTML: c.draw(hist)})
	}
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
