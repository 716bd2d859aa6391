package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/skiplock/skiplock"
)

// jobAction retries, cancels, pauses or resumes one job, then shows it.
func (d *Dashboard) jobAction(w http.ResponseWriter, r *http.Request, v *view) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	acts := map[string]func(context.Context, int64) (*skiplock.JobRow, error){
		"retry": d.client.JobRetry, "cancel": d.client.JobCancel,
		"pause": d.client.JobPause, "resume": d.client.JobResume,
	}
	if r.PathValue("action") == "delete" {
		return d.deleteJob(w, r, v, id)
	}
	act, ok := acts[r.PathValue("action")]
	if !ok {
		return &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("no job action %q", r.PathValue("action"))}
	}
	if _, err := d.visibleJob(r.Context(), v.P, id); err != nil {
		return err
	}
	if _, err := act(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, fmt.Sprintf("/jobs/%d", id), http.StatusSeeOther)
	return nil
}

// deleteJob deletes one finished job (a bulk delete of its id, so that a
// live job is never deleted), then lists the jobs saying so.
func (d *Dashboard) deleteJob(w http.ResponseWriter, r *http.Request, v *view, id int64) error {
	j, err := d.visibleJob(r.Context(), v.P, id)
	if err != nil {
		return err
	}
	if !j.State.Finished() {
		return &pageError{status: http.StatusConflict, msg: fmt.Sprintf("job %d is %s: only a finished job is deleted; cancel it first", id, j.State)}
	}
	res, err := d.client.JobsBulk(r.Context(), skiplock.BulkParams{Action: skiplock.BulkDelete,
		Filter: skiplock.BulkFilter{IDs: []int64{id}, Tenant: v.P.tenantFilter(nil)}})
	if err != nil {
		return err
	}
	if res.Done != 1 {
		return &pageError{status: http.StatusConflict, msg: fmt.Sprintf("job %d was not deleted: it is no longer finished", id)}
	}
	d.log.Info("dashboard delete", "job_id", id, "by", v.P.Name)
	http.Redirect(w, r, withQuery("/jobs", nil, "done", fmt.Sprintf("deleted job #%d", id)), http.StatusSeeOther)
	return nil
}

// queueAction pauses or resumes a queue, which counts every tenant's jobs.
func (d *Dashboard) queueAction(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := unscoped(v.P); err != nil {
		return err
	}
	name := r.PathValue("queue")
	var err error
	switch r.PathValue("action") {
	case "pause":
		err = d.client.QueuePause(r.Context(), name)
	case "resume":
		err = d.client.QueueResume(r.Context(), name)
	default:
		return &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("no queue action %q", r.PathValue("action"))}
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/queues", http.StatusSeeOther)
	return nil
}

func unscoped(p *Principal) error {
	if p.Scoped {
		return &pageError{status: http.StatusForbidden,
			msg: "this page counts the jobs of every tenant; it needs a token without a tenant scope"}
	}
	return nil
}

// bulkActs are the dashboard's bulk actions and the states each acts on
// when the filter names none.
var bulkActs = map[skiplock.BulkAction]string{
	skiplock.BulkRetry:  "failed and cancelled",
	skiplock.BulkCancel: "every live state",
	skiplock.BulkPause:  "pending, scheduled, waiting and running (a running job is asked to pause and stops when its worker returns)",
	skiplock.BulkResume: "paused",
	skiplock.BulkDelete: "completed, failed and cancelled (a live job is never deleted)",
}

type bulkData struct {
	Action string
	// Acts says which states the action takes when the filter names none.
	Acts   string
	Filter jobFilter
	// IDs are the jobs selected on the list; none when the action takes
	// every job the filter picks.
	IDs     []int64
	Query   url.Values
	Matched int
	Back    string
}

// bulkParams reads the action, the jobs selected (job, repeated; not "id",
// which as a form control's name would hide the form's own id in scripts) and the
// jobs page's filter of a bulk call.
func bulkParams(q url.Values, p *Principal) (skiplock.BulkParams, jobFilter, []int64, error) {
	f, err := readFilter(q)
	if err != nil {
		return skiplock.BulkParams{}, f, nil, err
	}
	if f.Narrow() {
		return skiplock.BulkParams{}, f, nil, &pageError{status: http.StatusBadRequest,
			msg: "bulk actions filter by state, kind, queue, tenant, error and payload or metadata; clear the other filters first, or select the jobs"}
	}
	action := skiplock.BulkAction(q.Get("action"))
	if _, ok := bulkActs[action]; !ok {
		return skiplock.BulkParams{}, f, nil, &pageError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("action: want retry, cancel, pause, resume or delete, got %q", q.Get("action"))}
	}
	ids, err := selectedIDs(q["job"])
	if err != nil {
		return skiplock.BulkParams{}, f, nil, err
	}
	if f.Empty() && len(ids) == 0 && action == skiplock.BulkRetry {
		f.States = []string{string(skiplock.StateFailed)} // "retry failed…" on an unfiltered list
	}
	bp := skiplock.BulkParams{Action: action}
	bp.Filter.IDs = ids
	bp.Filter.ErrorType, bp.Filter.ErrorMessage = f.ErrorType, f.ErrorMessage
	bp.Filter.Payload, bp.Filter.Metadata = f.payload, f.metadata
	for _, st := range f.States {
		bp.Filter.States = append(bp.Filter.States, skiplock.JobState(st))
	}
	if f.Kind != "" {
		bp.Filter.Kinds = []string{f.Kind}
	}
	if f.Queue != "" {
		bp.Filter.Queues = []string{f.Queue}
	}
	var tenant *string
	if f.Tenant != "" {
		tenant = &f.Tenant
	}
	bp.Filter.Tenant = p.tenantFilter(tenant)
	return bp, f, ids, nil
}

// selectedIDs reads the ids of the jobs selected on the list.
func selectedIDs(vals []string) ([]int64, error) {
	if len(vals) > skiplock.MaxBulkIDs {
		return nil, &pageError{status: http.StatusBadRequest, msg: fmt.Sprintf("job: at most %d jobs selected, got %d", skiplock.MaxBulkIDs, len(vals))}
	}
	ids := make([]int64, 0, len(vals))
	for _, v := range vals {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return nil, &pageError{status: http.StatusBadRequest, msg: fmt.Sprintf("job: want a job id, got %q", v)}
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// filterQuery is the jobs page's query of f, for links back to it.
func filterQuery(f jobFilter) url.Values {
	q := url.Values{}
	for _, st := range f.States {
		q.Add("state", st)
	}
	for k, val := range map[string]string{"kind": f.Kind, "queue": f.Queue, "tenant": f.Tenant,
		"error_type": f.ErrorType, "error_message": f.ErrorMessage, "data": f.Data} {
		if val != "" {
			q.Set(k, val)
		}
	}
	return q
}

// bulkConfirm counts what a bulk action would touch and asks to confirm.
func (d *Dashboard) bulkConfirm(w http.ResponseWriter, r *http.Request, v *view) error {
	if !v.P.CanAct() {
		return &pageError{status: http.StatusForbidden, msg: fmt.Sprintf("role %q may look but not act; an admin token may", v.P.Role)}
	}
	bp, f, ids, err := bulkParams(r.URL.Query(), v.P)
	if err != nil {
		return err
	}
	bp.DryRun = true
	res, err := d.client.JobsBulk(r.Context(), bp)
	if err != nil {
		return err
	}
	v.Page, v.Title = "jobs", "Confirm bulk "+string(bp.Action)
	v.Data = &bulkData{Action: string(bp.Action), Acts: bulkActs[bp.Action], Filter: f, IDs: ids, Query: filterQuery(f),
		Matched: res.Matched, Back: withQuery("/jobs", filterQuery(f))}
	d.render(w, "bulk", v)
	return nil
}

// bulk acts on every job the filter picks, then shows how many it changed.
func (d *Dashboard) bulk(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := r.ParseForm(); err != nil {
		return &pageError{status: http.StatusBadRequest, msg: "unreadable form"}
	}
	bp, f, _, err := bulkParams(r.PostForm, v.P)
	if err != nil {
		return err
	}
	res, err := d.client.JobsBulk(r.Context(), bp)
	if err != nil {
		return err
	}
	d.log.Info("dashboard bulk action", "action", bp.Action, "matched", res.Matched, "done", res.Done, "by", v.P.Name)
	q := filterQuery(f)
	q.Set("done", fmt.Sprintf("%s %s of %s jobs", string(bp.Action)+" applied to", strconv.Itoa(res.Done), strconv.Itoa(res.Matched)))
	http.Redirect(w, r, withQuery("/jobs", q), http.StatusSeeOther)
	return nil
}
