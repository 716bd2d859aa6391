package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// Listing bounds of GET /v1/jobs.
const (
	defaultListLimit = 50
	maxListLimit     = 1000
	maxWorkflowJobs  = 10000
)

type jobAnswer struct {
	Job       *skiplock.JobView `json:"job"`
	Duplicate bool              `json:"duplicate,omitempty"`
}

func views(jobs []*skiplock.JobRow) []*skiplock.JobView {
	out := make([]*skiplock.JobView, len(jobs))
	for i, j := range jobs {
		out[i] = skiplock.NewJobView(j)
	}
	return out
}

// singleBodyLimit bounds a one-job body: the payload and room for the rest.
func (s *Server) singleBodyLimit() int64 { return s.cfg.MaxPayloadBytes + 256<<10 }

func (s *Server) enqueue(w http.ResponseWriter, r *http.Request, p *principal) error {
	body, err := readBody(r, s.singleBodyLimit())
	if err != nil {
		return err
	}
	job, err := s.parseSpec(body, "", p)
	if err != nil {
		return err
	}
	if err := headerTraceparent(r, []skiplock.InsertManyParams{job}); err != nil {
		return err
	}
	if err := s.checkParents(r.Context(), "", p, []skiplock.InsertManyParams{job}); err != nil {
		return err
	}
	res, err := s.client.Insert(r.Context(), job.Args, job.Opts)
	err = missingParent(err, "", []skiplock.InsertManyParams{job})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Duplicate {
		status = http.StatusOK
	} else {
		s.inserted(res.Job)
	}
	writeJSON(w, status, jobAnswer{Job: skiplock.NewJobView(res.Job), Duplicate: res.Duplicate})
	return nil
}

// inserted counts a new job (the client wakes long polls on its queue).
func (s *Server) inserted(j *skiplock.JobRow) {
	s.metrics.enqueued.WithLabelValues(s.metrics.pairs.of(j.Kind, j.Queue)).Inc()
}

type batchBody struct {
	Jobs []json.RawMessage `json:"jobs"`
}

type batchAnswer struct {
	Jobs []batchJob `json:"jobs"`
}

type batchJob struct {
	*skiplock.JobView
	Duplicate bool `json:"duplicate,omitempty"`
}

func (s *Server) enqueueBatch(w http.ResponseWriter, r *http.Request, p *principal) error {
	var body batchBody
	if err := decodeBody(r, s.cfg.MaxBatchBodyBytes, &body); err != nil {
		return err
	}
	switch {
	case body.Jobs == nil:
		return badRequest("jobs", "is required: an array of 1 to %d jobs", DefaultMaxBatchJobs)
	case len(body.Jobs) == 0 || len(body.Jobs) > DefaultMaxBatchJobs:
		return badRequest("jobs", "must hold 1 to %d jobs, got %d", DefaultMaxBatchJobs, len(body.Jobs))
	}
	jobs := make([]skiplock.InsertManyParams, len(body.Jobs))
	for i, raw := range body.Jobs {
		var err error
		if jobs[i], err = s.parseSpec(raw, fmt.Sprintf("jobs[%d]", i), p); err != nil {
			return err
		}
	}
	if err := headerTraceparent(r, jobs); err != nil {
		return err
	}
	if err := s.checkParents(r.Context(), "jobs", p, jobs); err != nil {
		return err
	}
	res, err := s.client.InsertBatch(r.Context(), jobs)
	err = missingParent(err, "jobs", jobs)
	if err != nil {
		return err
	}
	out := batchAnswer{Jobs: make([]batchJob, len(res))}
	for i, r := range res {
		out.Jobs[i] = batchJob{JobView: skiplock.NewJobView(r.Job), Duplicate: r.Duplicate}
		if !r.Duplicate {
			s.inserted(r.Job)
		}
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// jobErr names job id in a not-found answer.
func jobErr(err error, id int64) error {
	if errors.Is(err, skiplock.ErrNotFound) {
		return notFound("job %d: not found", id)
	}
	return err
}

// visibleJob answers a job the principal may see; another tenant's job is
// as missing as one that does not exist, word for word.
func (s *Server) visibleJob(ctx context.Context, id int64, p *principal) (*skiplock.JobRow, error) {
	j, err := s.client.JobGet(ctx, id)
	// A job of another tenant answers as one that does not exist, word for
	// word.
	if err == nil && !p.sees(j.Tenant) {
		err = skiplock.ErrNotFound
	}
	if err != nil {
		return nil, jobErr(err, id)
	}
	return j, nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := parseID(r)
	if err != nil {
		return err
	}
	j, err := s.visibleJob(r.Context(), id, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, jobAnswer{Job: skiplock.NewJobView(j)})
	return nil
}

// jobAction answers POST /v1/jobs/{id}/cancel and the like.
func (s *Server) jobAction(act func(context.Context, int64) (*skiplock.JobRow, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		id, err := parseID(r)
		if err != nil {
			return err
		}
		// The actions take no field: a body, when sent, is an empty
		// object, and a field in it answers 400 naming it.
		if err := decodeBody(r, s.singleBodyLimit(), &struct{}{}); err != nil {
			return err
		}
		if _, err := s.visibleJob(r.Context(), id, p); err != nil {
			return err
		}
		j, err := act(r.Context(), id)
		if err != nil {
			return jobErr(err, id)
		}
		writeJSON(w, http.StatusOK, jobAnswer{Job: skiplock.NewJobView(j)})
		return nil
	}
}

// JobListAnswer is a page of GET /v1/jobs: {"jobs", "next_cursor"}.
type JobListAnswer struct {
	Jobs       []*skiplock.JobView `json:"jobs"`
	NextCursor string              `json:"next_cursor"`
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, p *principal) error {
	lp, err := listParams(r)
	if err != nil {
		return err
	}
	lp.Tenant = p.tenantFilter(lp.Tenant)
	out, err := ListJobs(r.Context(), s.client, lp)
	if err != nil {
		return err
	}
	body, err := appendJobs(append(make([]byte, 0, 64+len(out.Jobs)*768), '{'), out.Jobs, 0)
	if err != nil {
		return fmt.Errorf("encode jobs: %w", err)
	}
	body = append(body, `,"next_cursor":`...)
	body = strconv.AppendQuote(body, out.NextCursor) // digits only
	writeRawJSON(w, http.StatusOK, append(body, '}'))
	return nil
}

// appendJobs appends "jobs":[…], each view with the fields f picks, as
// encoding/json would write them.
func appendJobs(b []byte, jobs []*skiplock.JobView, f skiplock.ViewFields) ([]byte, error) {
	b = append(b, `"jobs":[`...)
	for i, v := range jobs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = v.AppendJSON(b, f); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// ListJobs answers a page of jobs as GET /v1/jobs does (the CLI prints the
// same): next_cursor is "" on the last page.
func ListJobs(ctx context.Context, c *skiplock.Client, lp skiplock.JobListParams) (*JobListAnswer, error) {
	limit := lp.Limit
	// One more tells whether there is a next page; at the library's bound a
	// full page says there may be one.
	lp.Limit = min(limit+1, skiplock.MaxJobListLimit)
	jobs, err := c.JobList(ctx, lp)
	if err != nil {
		return nil, err
	}
	out := &JobListAnswer{}
	if len(jobs) > limit || len(jobs) == lp.Limit {
		jobs = jobs[:limit]
		out.NextCursor = strconv.FormatInt(jobs[limit-1].ID, 10)
	}
	out.Jobs = views(jobs)
	return out, nil
}

func listParams(r *http.Request) (skiplock.JobListParams, error) {
	q := r.URL.Query()
	lp := skiplock.JobListParams{Limit: defaultListLimit}
	for _, v := range q["state"] {
		for _, st := range strings.Split(v, ",") {
			if st == "" {
				continue
			}
			state := skiplock.JobState(st)
			if !state.Valid() {
				return lp, badRequest("state", "unknown state %q (want one of scheduled, waiting, pending, running, paused, completed, failed, cancelled)", input.Truncate(st, 40))
			}
			lp.States = append(lp.States, state)
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"kind", &lp.Kind}, {"queue", &lp.Queue}, {"workflow_id", &lp.WorkflowID}} {
		v := q.Get(f.name)
		if err := input.CheckText(f.name, v, input.MaxKeyBytes); err != nil {
			return lp, err
		}
		*f.dst = v
	}
	if q.Has("tenant") {
		t := q.Get("tenant")
		if err := input.CheckText("tenant", t, input.MaxNameBytes); err != nil {
			return lp, err
		}
		lp.Tenant = &t
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			return lp, badRequest("limit", "must be an integer between 1 and %d, got %q", maxListLimit, input.Truncate(v, 40))
		}
		lp.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		id, ok := parsePositive(v)
		if !ok {
			return lp, badRequest("cursor", "must be a next_cursor of an earlier page, got %q", input.Truncate(v, 40))
		}
		lp.BeforeID = id
	}
	return lp, listFilters(q, &lp)
}

// workflowAnswer is docs/api.md's workflow object, with the stages of the
// client's workflow view added.
type WorkflowAnswer struct {
	WorkflowID   string                    `json:"workflow_id"`
	State        skiplock.WorkflowStatus   `json:"state"`
	Jobs         []*skiplock.JobView       `json:"jobs"`
	CurrentStage string                    `json:"current_stage"`
	Stages       []skiplock.WorkflowStage  `json:"stages"`
	Counts       map[skiplock.JobState]int `json:"counts"`
}

func (s *Server) getWorkflow(w http.ResponseWriter, r *http.Request, p *principal) error {
	id := r.PathValue("workflow_id")
	if err := input.CheckText("workflow_id", id, input.MaxKeyBytes); err != nil {
		return err
	}
	out, err := LoadWorkflow(r.Context(), s.client, id, p.tenantFilter(nil))
	if errors.Is(err, skiplock.ErrNotFound) {
		return notFound("workflow %q: no jobs", input.Truncate(id, 80))
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// LoadWorkflow answers GET /v1/workflows/{id} (the CLI prints the same): the
// jobs of workflow id visible to tenant (nil: every tenant), oldest first;
// ErrNotFound when none.
func LoadWorkflow(ctx context.Context, c *skiplock.Client, id string, tenant *string) (*WorkflowAnswer, error) {
	var jobs []*skiplock.JobRow
	lp := skiplock.JobListParams{WorkflowID: id, Tenant: tenant, Limit: maxListLimit}
	for len(jobs) < maxWorkflowJobs {
		page, err := c.JobList(ctx, lp)
		if err != nil {
			return nil, fmt.Errorf("workflow %q: list jobs: %w", id, err)
		}
		jobs = append(jobs, page...)
		if len(page) < lp.Limit {
			break
		}
		lp.BeforeID = page[len(page)-1].ID
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("workflow %q: %w", id, skiplock.ErrNotFound)
	}
	// Oldest first: a workflow reads in the order its stages were made.
	slices.SortFunc(jobs, func(a, b *skiplock.JobRow) int { return cmp.Compare(a.ID, b.ID) })
	v := skiplock.NewWorkflowView(id, jobs)
	return &WorkflowAnswer{WorkflowID: id, State: v.Status, Jobs: views(jobs),
		CurrentStage: v.CurrentStage, Stages: v.Stages, Counts: v.Counts}, nil
}
