package dashboard

import (
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// deadScan bounds how many of the newest failed jobs the dead-letter page
// groups.
const deadScan = 2000

type deadGroup struct {
	Kind, Type, Message string
	Count               int
	Latest              *skiplock.JobRow
	// Query lists the group's jobs; Retry and Delete confirm those actions
	// on exactly its filter: failed, of its kind, with an attempt error of
	// its type whose message holds its first line.
	Query, Retry, Delete string
}

type deadData struct {
	Groups  []*deadGroup
	Scanned int
	Capped  bool
}

// deadLetters groups the newest failed jobs by kind and last error.
func (d *Dashboard) deadLetters(w http.ResponseWriter, r *http.Request, v *view) error {
	rows, err := d.client.JobList(r.Context(), skiplock.JobListParams{States: []skiplock.JobState{skiplock.StateFailed},
		Tenant: v.P.tenantFilter(nil), Limit: deadScan})
	if err != nil {
		return err
	}
	groups := map[[3]string]*deadGroup{}
	var order []*deadGroup
	for _, j := range rows {
		typ, msg := "", ""
		if n := len(j.Errors); n > 0 {
			typ, msg = j.Errors[n-1].Type, firstLine(j.Errors[n-1].Message)
		}
		k := [3]string{j.Kind, typ, msg}
		g := groups[k]
		if g == nil {
			g = &deadGroup{Kind: j.Kind, Type: typ, Message: msg, Latest: j}
			kv := []string{"state", "failed", "kind", j.Kind, "error_type", typ, "error_message", messageFilter(msg)}
			g.Query = withQuery("/jobs", nil, kv...)
			g.Retry = withQuery("/bulk", nil, append(kv, "action", "retry")...)
			g.Delete = withQuery("/bulk", nil, append(kv, "action", "delete")...)
			groups[k] = g
			order = append(order, g)
		}
		g.Count++
	}
	sort.SliceStable(order, func(i, k int) bool { return order[i].Count > order[k].Count })
	v.Page, v.Title = "dead", "Dead letters"
	v.Data = &deadData{Groups: order, Scanned: len(rows), Capped: len(rows) == deadScan}
	d.render(w, "dead", v)
	return nil
}

// messageFilter is the error message filter of a group's message: its
// first line without the ellipsis of a cut one, within the filter's bound.
func messageFilter(msg string) string {
	msg = strings.TrimSuffix(msg, "…")
	for len(msg) > input.MaxKeyBytes {
		r := []rune(msg)
		msg = string(r[:len(r)-1])
	}
	return msg
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}

type schedulesData struct {
	Schedules []*skiplock.Schedule
	Periodic  []skiplock.PeriodicInfo
	Now       time.Time
}

// schedules lists the recurring per-entity schedules and the periodic
// (cron) jobs, each with its next run.
func (d *Dashboard) schedules(w http.ResponseWriter, r *http.Request, v *view) error {
	list, err := d.client.ScheduleList(r.Context(), v.P.tenantFilter(nil))
	if err != nil {
		return err
	}
	data := &schedulesData{Schedules: list, Now: time.Now()}
	if !v.P.Scoped {
		data.Periodic = d.client.Periodic(time.Now())
	}
	sort.Slice(data.Schedules, func(i, k int) bool { return data.Schedules[i].NextRunAt.Before(data.Schedules[k].NextRunAt) })
	v.Page, v.Title, v.Data = "schedules", "Schedules", data
	d.render(w, "schedules", v)
	return nil
}

// queues lists the queues with their live jobs, to pause and resume them.
func (d *Dashboard) queues(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := unscoped(v.P); err != nil {
		return err
	}
	data, err := d.loadOverview(r)
	if err != nil {
		return err
	}
	v.Page, v.Title, v.Data = "queues", "Queues", data
	d.render(w, "queues", v)
	return nil
}
