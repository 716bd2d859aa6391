package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// bulkBody is API.md's POST /v1/jobs/bulk body.
type bulkBody struct {
	Action string     `json:"action"`
	Filter bulkFilter `json:"filter"`
	DryRun bool       `json:"dry_run"`
}

type bulkFilter struct {
	State            []string `json:"state"`
	Kind             []string `json:"kind"`
	Queue            []string `json:"queue"`
	Tenant           *string  `json:"tenant"`
	OlderThanSeconds *float64 `json:"older_than_seconds"`
}

type bulkAnswer struct {
	Action  string `json:"action"`
	Matched int    `json:"matched"`
	Done    int    `json:"done"`
}

// jobsBulk retries, cancels, deletes, pauses or resumes the jobs a filter
// picks; a scoped token acts only on its tenant's jobs.
func (s *Server) jobsBulk(w http.ResponseWriter, r *http.Request, p *principal) error {
	var body bulkBody
	if err := decodeBody(r, s.singleBodyLimit(), &body); err != nil {
		return err
	}
	f := body.Filter
	// Checked before the token's tenant joins the filter: a scoped token
	// must name its selection too.
	if len(f.State) == 0 && len(f.Kind) == 0 && len(f.Queue) == 0 && f.Tenant == nil &&
		(f.OlderThanSeconds == nil || *f.OlderThanSeconds == 0) {
		return badRequest("filter", "name at least one of state, kind, queue, tenant, older_than_seconds")
	}
	older, err := input.Seconds("filter.older_than_seconds", f.OlderThanSeconds, input.MaxDelaySeconds)
	if err != nil {
		return err
	}
	bp := skiplock.BulkParams{Action: skiplock.BulkAction(body.Action), DryRun: body.DryRun,
		Filter: skiplock.BulkFilter{Kinds: f.Kind, Queues: f.Queue, Tenant: p.tenantFilter(f.Tenant), OlderThan: older}}
	for i, st := range f.State {
		if !skiplock.JobState(st).Valid() {
			return badRequest(fmt.Sprintf("filter.state[%d]", i), "unknown state %q", input.Truncate(st, 40))
		}
		bp.Filter.States = append(bp.Filter.States, skiplock.JobState(st))
	}
	res, err := s.client.JobsBulk(r.Context(), bp)
	var ve *skiplock.ValidationError
	if errors.As(err, &ve) && ve.Field != "action" && ve.Field != "filter" {
		return badRequest("filter."+ve.Field, "%s", ve.Message)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, bulkAnswer{Action: body.Action, Matched: res.Matched, Done: res.Done})
	return nil
}
