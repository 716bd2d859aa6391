package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

const pageSize = 50

// jobFilter is the jobs page's filter, read from the query string.
type jobFilter struct {
	States                          []string
	Kind, Queue, Tenant, WorkflowID string
	Tag, WorkerID, ErrorType        string
	ErrorMessage                    string
	// Data is the payload and metadata search: terms payload.KEY=VALUE
	// and metadata.KEY=VALUE (readData), read into payload and metadata.
	Data              string
	payload, metadata map[string]any
	// Key is an idempotency key: the search box's term when it is no job id.
	Key string
	// CreatedFrom and CreatedTo bound created_at (UTC, as a browser's
	// datetime-local input writes it: 2006-01-02T15:04).
	CreatedFrom, CreatedTo string
	from, to               time.Time
	Cursor                 int64
}

// Empty reports whether the filter picks every job.
func (f jobFilter) Empty() bool {
	return len(f.States) == 0 && f.Kind == "" && f.Queue == "" && f.Tenant == "" && f.WorkflowID == "" &&
		!f.Narrow()
}

// Narrow reports whether the filter uses a field bulk actions cannot.
func (f jobFilter) Narrow() bool {
	return f.WorkflowID != "" || f.Tag != "" || f.WorkerID != "" || f.ErrorType != "" || f.Key != "" ||
		f.CreatedFrom != "" || f.CreatedTo != "" || f.ErrorMessage != "" || f.Data != ""
}

// parseLocal reads a datetime-local value as UTC.
func parseLocal(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, &pageError{status: http.StatusBadRequest,
		msg: fmt.Sprintf("%s: want a time like 2006-01-02T15:04 (UTC), got %q", field, v)}
}

func readFilter(q url.Values) (jobFilter, error) {
	f := jobFilter{Kind: q.Get("kind"), Queue: q.Get("queue"), Tenant: q.Get("tenant"),
		WorkflowID: q.Get("workflow_id"), Tag: q.Get("tag"), WorkerID: q.Get("worker_id"),
		ErrorType: q.Get("error_type"), ErrorMessage: q.Get("error_message"), Data: strings.TrimSpace(q.Get("data")),
		Key: q.Get("idempotency_key"), CreatedFrom: q.Get("created_from"), CreatedTo: q.Get("created_to")}
	var err error
	if f.payload, f.metadata, err = readData(f.Data); err != nil {
		return f, err
	}
	if f.from, err = parseLocal("created_from", f.CreatedFrom); err != nil {
		return f, err
	}
	if f.to, err = parseLocal("created_to", f.CreatedTo); err != nil {
		return f, err
	}
	for _, v := range q["state"] {
		for _, st := range strings.Split(v, ",") {
			if st == "" {
				continue
			}
			if !skiplock.JobState(st).Valid() {
				return f, &pageError{status: http.StatusBadRequest, msg: fmt.Sprintf("state: unknown state %q", st)}
			}
			f.States = append(f.States, st)
		}
	}
	if c := q.Get("cursor"); c != "" {
		id, err := strconv.ParseInt(c, 10, 64)
		if err != nil || id <= 0 {
			return f, &pageError{status: http.StatusBadRequest, msg: fmt.Sprintf("cursor: want a job id, got %q", c)}
		}
		f.Cursor = id
	}
	return f, nil
}

// params answers the library's listing of f as p may see it.
func (f jobFilter) params(p *Principal, limit int) skiplock.JobListParams {
	lp := skiplock.JobListParams{Kind: f.Kind, Queue: f.Queue, WorkflowID: f.WorkflowID, BeforeID: f.Cursor, Limit: limit,
		WorkerID: f.WorkerID, ErrorType: f.ErrorType, ErrorMessage: f.ErrorMessage, IdempotencyKey: f.Key,
		CreatedAfter: f.from, CreatedBefore: f.to, Payload: f.payload, Metadata: f.metadata}
	if f.Tag != "" {
		lp.Tags = []string{f.Tag}
	}
	for _, st := range f.States {
		lp.States = append(lp.States, skiplock.JobState(st))
	}
	var tenant *string
	if f.Tenant != "" {
		tenant = &f.Tenant
	}
	lp.Tenant = p.tenantFilter(tenant)
	return lp
}

// readData reads the payload and metadata search: terms
// payload.KEY=VALUE and metadata.KEY=VALUE, apart by spaces, all of which
// must match. VALUE is JSON when it is JSON (42, true, "42"), else text; a
// double-quoted VALUE may hold spaces. A payload KEY a.b reaches into
// objects (as GET /v1/jobs?payload=); a metadata KEY is one key.
func readData(s string) (payload, metadata map[string]any, err error) {
	bad := func(format string, args ...any) error {
		return &pageError{status: http.StatusBadRequest, msg: "data: " + fmt.Sprintf(format, args...)}
	}
	for _, term := range dataTerms(s) {
		key, value, ok := strings.Cut(term, "=")
		var dst *map[string]any
		switch {
		case !ok:
		case strings.HasPrefix(key, "payload."):
			dst, key = &payload, strings.TrimPrefix(key, "payload.")
		case strings.HasPrefix(key, "metadata."):
			dst, key = &metadata, strings.TrimPrefix(key, "metadata.")
		}
		if dst == nil || key == "" {
			return nil, nil, bad("%q: want payload.KEY=VALUE or metadata.KEY=VALUE", term)
		}
		m, err := input.KeyValues([]string{key + ":" + value})
		if err != nil {
			return nil, nil, bad("%v", err)
		}
		if *dst == nil {
			*dst = map[string]any{}
		}
		if old, dup := (*dst)[key]; dup && fmt.Sprint(old) != fmt.Sprint(m[key]) {
			return nil, nil, bad("%s is given twice with different values", key)
		}
		(*dst)[key] = m[key]
	}
	return payload, metadata, nil
}

// dataTerms splits s at spaces outside double quotes.
func dataTerms(s string) []string {
	var terms []string
	var cur strings.Builder
	quoted, escaped := false, false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case quoted && r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case !quoted && (r == ' ' || r == '\t'):
			if cur.Len() > 0 {
				terms = append(terms, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		terms = append(terms, cur.String())
	}
	return terms
}

type jobsData struct {
	Filter jobFilter
	Query  url.Values
	Jobs   []*skiplock.JobView
	Next   string
}

// jobs lists jobs newest first, live and archived, a page at a time.
func (d *Dashboard) jobs(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	if s := strings.TrimSpace(q.Get("q")); s != "" {
		return d.search(w, r, v, s)
	}
	f, err := readFilter(q)
	if err != nil {
		return err
	}
	lp := f.params(v.P, pageSize+1)
	rows, err := d.client.JobList(r.Context(), lp)
	if err != nil {
		return err
	}
	data := &jobsData{Filter: f, Query: q}
	if len(rows) > pageSize {
		rows = rows[:pageSize]
		data.Next = withQuery("/jobs", q, "cursor", strconv.FormatInt(rows[pageSize-1].ID, 10))
	}
	for _, j := range rows {
		data.Jobs = append(data.Jobs, skiplock.NewJobView(j))
	}
	v.Page, v.Title, v.Data = "jobs", "Jobs", data
	d.render(w, "jobs", v)
	return nil
}

// search opens the job a search box term names: a positive integer (or
// #integer) is a job id; any other term, or an id of no job this principal
// sees, lists the jobs inserted under that idempotency key.
func (d *Dashboard) search(w http.ResponseWriter, r *http.Request, v *view, term string) error {
	if id, err := strconv.ParseInt(strings.TrimPrefix(term, "#"), 10, 64); err == nil && id > 0 {
		_, err := d.visibleJob(r.Context(), v.P, id)
		if err == nil {
			http.Redirect(w, r, fmt.Sprintf("/jobs/%d", id), http.StatusSeeOther)
			return nil
		}
		if !notFound(err) {
			return err
		}
	}
	http.Redirect(w, r, withQuery("/jobs", url.Values{}, "idempotency_key", term), http.StatusSeeOther)
	return nil
}

// notFound reports whether err says a job is missing (or not the
// principal's to see).
func notFound(err error) bool {
	var pe *pageError
	return errors.Is(err, skiplock.ErrNotFound) || errors.As(err, &pe) && pe.status == http.StatusNotFound
}

// visibleJob answers job id if p may see it; another tenant's job is as
// missing as one that does not exist.
func (d *Dashboard) visibleJob(ctx context.Context, p *Principal, id int64) (*skiplock.JobRow, error) {
	j, err := d.client.JobGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.Scoped && j.Tenant != p.Tenant {
		return nil, &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("job %d: not found", id)}
	}
	return j, nil
}

func pathID(r *http.Request) (int64, error) {
	s := r.PathValue("id")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, &pageError{status: http.StatusBadRequest, msg: fmt.Sprintf("job id: want a positive integer, got %q", s)}
	}
	return id, nil
}

type jobData struct {
	Job  *skiplock.JobView
	Next []*skiplock.JobView
	Live bool
}

// job shows one job: its payload, result, every attempt's error, its lease,
// its parents and the jobs waiting on it.
func (d *Dashboard) job(w http.ResponseWriter, r *http.Request, v *view) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	j, err := d.visibleJob(r.Context(), v.P, id)
	if err != nil {
		return err
	}
	data := &jobData{Job: skiplock.NewJobView(j), Live: !j.State.Finished()}
	if j.WorkflowID != "" {
		next, err := d.client.JobList(r.Context(), skiplock.JobListParams{WorkflowID: j.WorkflowID,
			Tenant: v.P.tenantFilter(nil), Limit: 1000})
		if err != nil {
			return err
		}
		for _, n := range next {
			if contains64(n.DependsOn, j.ID) {
				data.Next = append(data.Next, skiplock.NewJobView(n))
			}
		}
	}
	v.Page, v.Title, v.Data = "jobs", fmt.Sprintf("Job %d", id), data
	d.render(w, "job", v)
	return nil
}

func contains64(list []int64, id int64) bool {
	for _, v := range list {
		if v == id {
			return true
		}
	}
	return false
}
