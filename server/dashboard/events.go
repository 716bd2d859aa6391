package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
)

const keepAlive = 15 * time.Second

// liveJob is what a job page updates in place as its job changes.
type liveJob struct {
	State           skiplock.JobState `json:"state"`
	Progress        int               `json:"progress"`
	ProgressMessage string            `json:"progress_message"`
	Checkpoint      string            `json:"checkpoint"`
	WorkerID        string            `json:"worker_id"`
	LeaseUntil      string            `json:"lease_until"`
	Attempt         int               `json:"attempt"`
	Finished        bool              `json:"finished"`
}

// events streams changes to a page: with ?job=ID each change of that job
// (event: job, its live fields), otherwise each change of a visible job
// (event: change), on which list pages reload themselves.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request, v *view) error {
	var jobID int64
	if s := r.URL.Query().Get("job"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return &pageError{status: http.StatusBadRequest, msg: "job: want a job id"}
		}
		if _, err := d.visibleJob(r.Context(), v.P, id); err != nil {
			return err
		}
		jobID = id
	}
	ctx, cancel := context.WithCancel(r.Context())
	changes := make(chan Change, 256)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		err := d.backend.Follow(ctx, v.P.tenantFilter(nil), func(c Change) {
			if jobID != 0 && c.ID != jobID {
				return
			}
			select {
			case changes <- c:
			default: // the page reloads on the next change anyway
			}
		})
		if err != nil {
			d.log.Warn("dashboard: follow changes", "error", err)
		}
		cancel()
	})
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, ": connected\n\n"); err != nil {
		return nil
	}
	_ = rc.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		var msg string
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			msg = ": keep-alive\n\n"
		case c := <-changes:
			msg = d.eventFor(ctx, jobID, c)
		}
		if msg == "" {
			continue
		}
		if _, err := fmt.Fprint(w, msg); err != nil {
			return nil
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
	}
}

func (d *Dashboard) eventFor(ctx context.Context, jobID int64, c Change) string {
	if jobID == 0 {
		b, _ := json.Marshal(map[string]any{"id": c.ID, "state": c.State})
		return fmt.Sprintf("event: change\ndata: %s\n\n", b)
	}
	j, err := d.client.JobGet(ctx, jobID)
	if err != nil {
		return ""
	}
	v := skiplock.NewJobView(j)
	lj := liveJob{State: j.State, Progress: j.Progress, ProgressMessage: j.ProgressMessage,
		Checkpoint: prettyJSON(v.Checkpoint), WorkerID: j.WorkerID, Attempt: j.Attempt, Finished: j.State.Finished()}
	if j.LeaseUntil != nil {
		lj.LeaseUntil = j.LeaseUntil.UTC().Format("2006-01-02 15:04:05Z")
	}
	b, _ := json.Marshal(lj)
	return fmt.Sprintf("event: job\ndata: %s\n\n", b)
}
