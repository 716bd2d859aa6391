package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// POST /v1/jobs/complete: a worker reports many finished jobs in one call
// and one statement, each fenced on its attempt as the single-job call is.

type completeManyBody struct {
	WorkerID string             `json:"worker_id"`
	Jobs     []completeManyItem `json:"jobs"`
}

type completeManyItem struct {
	ID      *int64          `json:"id"`
	Attempt *int            `json:"attempt"`
	Queue   *string         `json:"queue"`
	Result  json.RawMessage `json:"result"`
}

type completeManyAnswer struct {
	Results []completeManyOutcome `json:"results"`
}

// completeManyOutcome is one job's outcome: ok, or the error the
// single-job call would have answered.
type completeManyOutcome struct {
	ID    int64        `json:"id"`
	OK    bool         `json:"ok"`
	Error *errorDetail `json:"error,omitempty"`
}

func (s *Server) completeMany(w http.ResponseWriter, r *http.Request, p *principal) error {
	var b completeManyBody
	if err := decodeBody(r, s.cfg.MaxBatchBodyBytes, &b); err != nil {
		return err
	}
	if b.WorkerID == "" {
		return badRequest("worker_id", "is required")
	}
	if err := input.CheckText("worker_id", b.WorkerID, input.MaxNameBytes); err != nil {
		return err
	}
	if len(b.Jobs) == 0 {
		return badRequest("jobs", "must name at least one job")
	}
	rep, err := s.checkReports(r.Context(), p, "jobs", b.Jobs)
	if err != nil {
		return err
	}
	var res []skiplock.CompleteManyResult
	if len(rep.keep) > 0 {
		if res, err = s.client.CompleteMany(r.Context(), b.WorkerID, rep.keep); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, completeManyAnswer{Results: s.reportOutcomes(rep, res)})
	return nil
}

// batchReport is a checked batch report: its jobs in order (items), those
// the token may report on (keep), and the others with why not (hidden).
type batchReport struct {
	items, keep []skiplock.CompleteManyItem
	hidden      map[int64]error
}

// checkReports checks the jobs of a batch report, field naming them
// ("jobs", or a claim's "complete").
func (s *Server) checkReports(ctx context.Context, p *principal, field string, jobs []completeManyItem) (*batchReport, error) {
	items, err := s.parseReports(field, jobs)
	if err != nil {
		return nil, err
	}
	keep, hidden, err := s.visibleReports(ctx, p, items)
	if err != nil {
		return nil, err
	}
	return &batchReport{items: items, keep: keep, hidden: hidden}, nil
}

// parseReports checks the jobs of a batch report, field naming them
// ("jobs", or a claim's "complete"), and answers them as the library's.
func (s *Server) parseReports(field string, jobs []completeManyItem) ([]skiplock.CompleteManyItem, error) {
	if len(jobs) > skiplock.MaxCompleteMany {
		return nil, badRequest(field, "must name at most %d jobs, got %d", skiplock.MaxCompleteMany, len(jobs))
	}
	items := make([]skiplock.CompleteManyItem, len(jobs))
	for i, j := range jobs {
		at := fmt.Sprintf("%s[%d]", field, i)
		if j.ID == nil {
			return nil, badRequest(at+".id", "is required")
		}
		if *j.ID < 1 {
			return nil, badRequest(at+".id", "must be a positive job id, got %d", *j.ID)
		}
		items[i].ID = *j.ID
		var err error
		if items[i].Attempt, err = reportAttempt(at+".attempt", j.Attempt); err != nil {
			return nil, err
		}
		if items[i].Queue, err = reportQueue(at+".queue", j.Queue); err != nil {
			return nil, err
		}
		if int64(len(j.Result)) > s.cfg.MaxPayloadBytes {
			return nil, tooLarge(at+".result", "is over the limit of %d bytes", s.cfg.MaxPayloadBytes)
		}
		if items[i].Result, err = input.CleanJSON(at+".result", j.Result); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// visibleReports answers the items p may report on (keep), and the others
// with why not (hidden): a tenant-scoped token reports on its tenant's jobs
// only, and another tenant's job is as missing as one that does not exist.
func (s *Server) visibleReports(ctx context.Context, p *principal, items []skiplock.CompleteManyItem) ([]skiplock.CompleteManyItem, map[int64]error, error) {
	if !p.scoped {
		return items, nil, nil
	}
	keep := items[:0:0]
	hidden := map[int64]error{}
	for _, it := range items {
		if _, err := s.visibleJob(ctx, it.ID, p); err != nil {
			if ae := toAPIError(err); ae.status != http.StatusNotFound {
				return nil, nil, err
			}
			hidden[it.ID] = err
			continue
		}
		keep = append(keep, it)
	}
	return keep, hidden, nil
}

// reportOutcomes answers each job's outcome in order, from the library's
// results (res) and the refusals before it (rep.hidden), and counts the
// completions.
func (s *Server) reportOutcomes(rep *batchReport, res []skiplock.CompleteManyResult) []completeManyOutcome {
	items, hidden := rep.items, rep.hidden
	byID := make(map[int64]error, len(res))
	for _, c := range res {
		byID[c.ID] = c.Err
	}
	out := make([]completeManyOutcome, len(items))
	now := time.Now()
	for i, it := range items {
		err, refused := hidden[it.ID]
		if !refused {
			err = byID[it.ID]
		}
		out[i] = completeManyOutcome{ID: it.ID, OK: err == nil}
		if err != nil {
			ae := toAPIError(jobErr(err, it.ID))
			out[i].Error = &errorDetail{Code: ae.code, Message: ae.message}
			continue
		}
		s.claims.completed(s.metrics, it.ID, now)
	}
	return out
}

// claimMemo remembers the kind, queue and start of jobs claimed through
// this server, so that a batch report, which names only ids, counts its
// completions by kind and queue as the single-job call does. It keeps two
// generations of at most claimMemoSize jobs each: a job reported within
// that many claims of its own is found. A job it does not know (claimed
// through another server, or long ago) counts under empty labels.
type claimMemo struct {
	mu        sync.Mutex
	cur, prev map[int64]claimedJob
}

const claimMemoSize = 1 << 16

type claimedJob struct {
	kind, queue string
	started     time.Time
}

func (m *claimMemo) remember(jobs []*skiplock.JobRow) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range jobs {
		if len(m.cur) >= claimMemoSize || m.cur == nil {
			m.prev, m.cur = m.cur, make(map[int64]claimedJob, min(claimMemoSize, 1024))
		}
		c := claimedJob{kind: j.Kind, queue: j.Queue}
		if j.StartedAt != nil {
			c.started = *j.StartedAt
		}
		m.cur[j.ID] = c
	}
}

func (m *claimMemo) take(id int64) (claimedJob, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.cur[id]; ok {
		delete(m.cur, id)
		return c, true
	}
	c, ok := m.prev[id]
	delete(m.prev, id)
	return c, ok
}

// completed counts a job a batch report finished.
func (m *claimMemo) completed(mt *metrics, id int64, at time.Time) {
	c, ok := m.take(id)
	mt.completion(c.kind, c.queue, at.Sub(c.started), ok && !c.started.IsZero())
}
