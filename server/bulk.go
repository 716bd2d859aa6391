package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// bulkBody is API.md's POST /v1/jobs/bulk body.
type bulkBody struct {
	Action string     `json:"action"`
	Filter bulkFilter `json:"filter"`
	DryRun bool       `json:"dry_run"`
	// Async runs the action as an operation and answers 202 at once.
	Async bool `json:"async"`
}

type bulkFilter struct {
	State            []string `json:"state"`
	Kind             []string `json:"kind"`
	Queue            []string `json:"queue"`
	Tenant           *string  `json:"tenant"`
	OlderThanSeconds *float64 `json:"older_than_seconds"`
	ErrorType        string   `json:"error_type"`
	ErrorMessage     string   `json:"error_message"`
	// IDs are job ids as JSON numbers or decimal strings (as next_cursor
	// writes one), for callers whose numbers do not hold 64 bits.
	IDs      []json.RawMessage          `json:"ids"`
	Payload  map[string]json.RawMessage `json:"payload"`
	Metadata map[string]json.RawMessage `json:"metadata"`
}

// empty answers whether the body names no field, before a scoped token's
// tenant joins the filter: a scoped token must name its selection too.
func (f bulkFilter) empty() bool {
	return len(f.State) == 0 && len(f.Kind) == 0 && len(f.Queue) == 0 && f.Tenant == nil &&
		(f.OlderThanSeconds == nil || *f.OlderThanSeconds == 0) && f.ErrorType == "" && f.ErrorMessage == "" &&
		len(f.IDs) == 0 && len(f.Payload) == 0 && len(f.Metadata) == 0
}

// jobFilter answers the filter's fields that JobsBulk checks itself.
func (f bulkFilter) jobFilter() (skiplock.BulkFilter, error) {
	out := skiplock.BulkFilter{Kinds: f.Kind, Queues: f.Queue, ErrorType: f.ErrorType, ErrorMessage: f.ErrorMessage}
	for i, raw := range f.IDs {
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return out, badRequest(fmt.Sprintf("filter.ids[%d]", i), "must be a job id (a number or a string of digits), got %s", input.Truncate(string(raw), 40))
			}
			n = json.Number(s)
		}
		id, ok := parsePositive(n.String())
		if !ok {
			return out, badRequest(fmt.Sprintf("filter.ids[%d]", i), "must be a positive job id, got %s", input.Truncate(string(raw), 40))
		}
		out.IDs = append(out.IDs, id)
	}
	var err error
	if out.Payload, err = jsonValues("filter.payload", f.Payload); err != nil {
		return out, err
	}
	out.Metadata, err = jsonValues("filter.metadata", f.Metadata)
	return out, err
}

// jsonValues reads an object's values with their numbers as written, so
// that a 64-bit id in a payload compares as itself.
func jsonValues(field string, m map[string]json.RawMessage) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, raw := range m {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, badRequest(field+"."+k, "must be a JSON value: %v", err)
		}
		out[k] = v
	}
	return out, nil
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
	if f.empty() {
		return badRequest("filter", "name at least one of state, kind, queue, tenant, older_than_seconds, error_type, error_message, ids, payload, metadata")
	}
	older, err := input.Seconds("filter.older_than_seconds", f.OlderThanSeconds, input.MaxDelaySeconds)
	if err != nil {
		return err
	}
	jf, err := f.jobFilter()
	if err != nil {
		return err
	}
	jf.Tenant, jf.OlderThan = p.tenantFilter(f.Tenant), older
	bp := skiplock.BulkParams{Action: skiplock.BulkAction(body.Action), DryRun: body.DryRun, Filter: jf}
	for i, st := range f.State {
		if !skiplock.JobState(st).Valid() {
			return badRequest(fmt.Sprintf("filter.state[%d]", i), "unknown state %q", input.Truncate(st, 40))
		}
		bp.Filter.States = append(bp.Filter.States, skiplock.JobState(st))
	}
	err = bp.Check()
	var ve *skiplock.ValidationError
	if errors.As(err, &ve) && ve.Field != "action" && ve.Field != "filter" {
		return badRequest("filter."+ve.Field, "%s", ve.Message)
	}
	if err != nil {
		return err
	}
	var owner *string
	if p.scoped {
		owner = &p.tenant
	}
	op := s.ops.start(s.ctx, s.client, bp, owner)
	if body.Async {
		writeJSON(w, http.StatusAccepted, operationAnswer{op.snapshot()})
		return nil
	}
	return s.awaitBulk(w, r, op)
}

// awaitBulk answers a synchronous bulk action: its counts when it ends
// within BulkSyncLimit, else 202 with the operation it goes on as. A
// caller that goes away first stops it before its next batch.
func (s *Server) awaitBulk(w http.ResponseWriter, r *http.Request, op *operation) error {
	limit := time.NewTimer(s.cfg.BulkSyncLimit)
	defer limit.Stop()
	select {
	case <-op.done:
	case <-limit.C:
		writeJSON(w, http.StatusAccepted, operationAnswer{op.snapshot()})
		return nil
	case <-r.Context().Done():
		op.cancel()
		<-op.done
		return r.Context().Err()
	}
	v := op.snapshot()
	if v.State != opCompleted {
		op.mu.Lock()
		err := op.err
		op.mu.Unlock()
		if err == nil {
			err = context.Canceled // the server is closing
		}
		return err
	}
	writeJSON(w, http.StatusOK, bulkAnswer{Action: v.Action, Matched: v.Matched, Done: v.Done})
	return nil
}
