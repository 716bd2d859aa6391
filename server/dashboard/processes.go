package dashboard

import (
	"net/http"

	"github.com/skiplock/skiplock"
)

// processJobsShown bounds the jobs a process's row links to; the count
// says how many it runs.
const processJobsShown = 20

type processesData struct {
	Clients, HTTPWorkers []processRow
	Running              int64
	Capped               bool
}

// processRow is a process and the first of its running jobs.
type processRow struct {
	*skiplock.Process
	N     int64 // running jobs
	Shown []*skiplock.JobRow
	More  string // the jobs page of all of them, when not all are shown
}

// processes lists the clients working on the database and the HTTP workers
// holding jobs, each with its running jobs.
func (d *Dashboard) processes(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := unscoped(v.P); err != nil {
		return err
	}
	ps, err := d.client.ProcessList(r.Context())
	if err != nil {
		return err
	}
	data := &processesData{Running: int64(ps.Running), Capped: ps.Capped}
	for _, p := range ps.Processes {
		row := processRow{Process: p, N: int64(len(p.Jobs)), Shown: p.Jobs[:min(len(p.Jobs), processJobsShown)]}
		if len(p.Jobs) > processJobsShown {
			row.More = withQuery("/jobs", nil, "state", "running", "worker_id", p.ID)
		}
		if p.Kind == skiplock.ProcessClient {
			data.Clients = append(data.Clients, row)
		} else {
			data.HTTPWorkers = append(data.HTTPWorkers, row)
		}
	}
	v.Page, v.Title, v.Data = "processes", "Processes", data
	d.render(w, "processes", v)
	return nil
}
