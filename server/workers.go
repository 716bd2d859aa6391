package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// Bounds of the worker protocol.
const (
	maxLeaseSeconds = input.MaxLeaseSeconds
	maxKinds        = 100
)

type claimBody struct {
	WorkerID     string   `json:"worker_id"`
	Max          *int     `json:"max"`
	LeaseSeconds *float64 `json:"lease_seconds"`
	WaitSeconds  *float64 `json:"wait_seconds"`
	Kinds        []string `json:"kinds"`
	// Fields, when given, names the job fields the answer carries (id and
	// attempt always come): a worker reads less, the server writes less.
	Fields []string `json:"fields"`
	// Complete reports jobs the worker finished, as POST /v1/jobs/complete
	// does, in the claim's transaction: one call a round, not two.
	Complete []completeManyItem `json:"complete"`
}

func (s *Server) claim(w http.ResponseWriter, r *http.Request, p *principal) error {
	queue := r.PathValue("queue")
	if err := input.CheckText("queue", queue, input.MaxNameBytes); err != nil {
		return err
	}
	var b claimBody
	if err := decodeBody(r, s.cfg.MaxBatchBodyBytes, &b); err != nil {
		return err
	}
	params, err := claimParams(queue, &b)
	if err != nil {
		return err
	}
	var fields skiplock.ViewFields
	if b.Fields != nil {
		if fields, err = skiplock.ParseViewFields("fields", b.Fields); err != nil {
			return err
		}
	}
	var rep *batchReport
	var keep []skiplock.CompleteManyItem
	if b.Complete != nil {
		if rep, err = s.checkReports(r.Context(), p, "complete", b.Complete); err != nil {
			return err
		}
		keep = rep.keep
	}
	// A tenant-scoped worker claims its tenant's jobs only.
	params.Tenant = p.tenantFilter(nil)
	params.Recheck = s.cfg.ClaimRecheckInterval
	// A long poll may outlast the server's write timeout.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(params.Wait + 30*time.Second))
	res, jobs, err := s.claimWaiting(r.Context(), keep, params)
	if err != nil {
		return err
	}
	if err := r.Context().Err(); err != nil {
		// The worker went away (a drain cancels its waiting claim) while
		// the claim ran: nobody will run these jobs, so they go back now
		// instead of when their leases run out.
		s.handBack(jobs)
		return err
	}
	s.claims.remember(jobs)
	body, err := s.claimAnswer(jobs, fields, rep, res)
	if err != nil {
		// Nobody gets the claim.
		s.handBack(jobs)
		return err
	}
	writeRawJSON(w, http.StatusOK, body)
	return nil
}

// claimAnswer writes a claim's answer: the jobs, with fields, and when the
// claim reported (rep), each report's outcome.
func (s *Server) claimAnswer(jobs []*skiplock.JobRow, fields skiplock.ViewFields, rep *batchReport, res []skiplock.CompleteManyResult) ([]byte, error) {
	size := 64 + len(jobs)*768
	if rep != nil {
		size += len(rep.items) * 32
	}
	body, err := appendJobs(append(make([]byte, 0, size), '{'), views(jobs), fields)
	if err != nil {
		return nil, fmt.Errorf("encode claimed jobs: %w", err) // a job whose stored JSON is not JSON
	}
	if rep != nil {
		done, err := json.Marshal(s.reportOutcomes(rep, res))
		if err != nil {
			return nil, err
		}
		body = append(append(body, `,"completed":`...), done...)
	}
	return append(body, '}'), nil
}

// handBack returns claimed jobs that no worker received (see
// Client.HandBack); one that cannot go back waits for the rescuer.
func (s *Server) handBack(jobs []*skiplock.JobRow) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.client.HandBack(ctx, jobs); err != nil {
		s.log.Warn("hand back claimed jobs", "error", err)
	}
}

func claimParams(queue string, b *claimBody) (skiplock.ClaimParams, error) {
	params := skiplock.ClaimParams{Queue: queue, WorkerID: b.WorkerID, Max: 1, Kinds: b.Kinds}
	if b.WorkerID == "" {
		return params, badRequest("worker_id", "is required")
	}
	if err := input.CheckText("worker_id", b.WorkerID, input.MaxNameBytes); err != nil {
		return params, err
	}
	if b.Max != nil {
		params.Max = *b.Max
	}
	if len(b.Kinds) > maxKinds {
		return params, badRequest("kinds", "must name at most %d kinds", maxKinds)
	}
	for i, k := range b.Kinds {
		if err := input.CheckText(fmt.Sprintf("kinds[%d]", i), k, input.MaxNameBytes); err != nil {
			return params, err
		}
	}
	lease, err := input.Seconds("lease_seconds", b.LeaseSeconds, maxLeaseSeconds)
	if err != nil {
		return params, err
	}
	if b.LeaseSeconds != nil && lease < time.Second {
		return params, badRequest("lease_seconds", "must be at least 1, got %s", input.Number(*b.LeaseSeconds))
	}
	params.Lease = lease
	params.Wait, err = input.Seconds("wait_seconds", b.WaitSeconds, DefaultMaxWaitSeconds)
	return params, err
}

// claimWaiting reports done and claims (the client's CompleteAndClaim),
// its wait ended early by the worker going away (ctx) or by Close, which
// answers what there is.
func (s *Server) claimWaiting(ctx context.Context, done []skiplock.CompleteManyItem, params skiplock.ClaimParams) ([]skiplock.CompleteManyResult, []*skiplock.JobRow, error) {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	res, jobs, err := s.client.CompleteAndClaim(waitCtx, done, params)
	// Shutting down while the claim waited (the reports, if any, are
	// stored and res answers them): answer what there is.
	if err != nil && ctx.Err() == nil && s.ctx.Err() != nil && (len(done) == 0 || res != nil) {
		return res, nil, nil
	}
	return res, jobs, err
}

type heartbeatBody struct {
	WorkerID        string          `json:"worker_id"`
	Attempt         *int            `json:"attempt"`
	Queue           *string         `json:"queue"`
	LeaseSeconds    *float64        `json:"lease_seconds"`
	Progress        *int            `json:"progress"`
	ProgressMessage *string         `json:"progress_message"`
	Checkpoint      json.RawMessage `json:"checkpoint"`
}

type heartbeatAnswer struct {
	LeaseUntil      time.Time `json:"lease_until"`
	CancelRequested bool      `json:"cancel_requested"`
	PauseRequested  bool      `json:"pause_requested"`
}

// heldReport is what a report says of its job: its id, the attempt (0
// when not given) and the queue ("" when not given) the claim answered.
type heldReport struct {
	id      int64
	attempt int
	queue   string
}

// heldJob checks a report's job id, worker id, attempt and queue, and that
// a scoped token reports only on its tenant's jobs.
func (s *Server) heldJob(r *http.Request, p *principal, workerID string, attempt *int, queue *string) (heldReport, error) {
	var h heldReport
	id, err := parseID(r)
	if err != nil {
		return h, err
	}
	if workerID == "" {
		return h, badRequest("worker_id", "is required")
	}
	if err := input.CheckText("worker_id", workerID, input.MaxNameBytes); err != nil {
		return h, err
	}
	n, err := reportAttempt("attempt", attempt)
	if err != nil {
		return h, err
	}
	q, err := reportQueue("queue", queue)
	if err != nil {
		return h, err
	}
	if p.scoped {
		if _, err := s.visibleJob(r.Context(), id, p); err != nil {
			return h, err
		}
	}
	return heldReport{id: id, attempt: n, queue: q}, nil
}

// reportQueue reads the queue a report names, field naming it: "" when not
// given, else a queue name; an empty one is refused, as it names nothing.
func reportQueue(field string, queue *string) (string, error) {
	if queue == nil {
		return "", nil
	}
	if *queue == "" {
		return "", badRequest(field, "must not be empty (leave it out when the queue is not known)")
	}
	return *queue, input.CheckText(field, *queue, input.MaxNameBytes)
}

// reportAttempt reads the attempt a report names, field naming it: 0 when
// not given, else one the database can hold (input.Attempt), refused
// before anything is read or written.
func reportAttempt(field string, attempt *int) (int, error) {
	if attempt == nil {
		return 0, nil
	}
	return *attempt, input.Attempt(field, *attempt)
}

func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request, p *principal) error {
	var b heartbeatBody
	if err := decodeBody(r, s.singleBodyLimit(), &b); err != nil {
		return err
	}
	h, err := s.heldJob(r, p, b.WorkerID, b.Attempt, b.Queue)
	if err != nil {
		return err
	}
	id := h.id
	hp := skiplock.HeartbeatParams{WorkerID: b.WorkerID, Attempt: h.attempt, Queue: h.queue, Progress: b.Progress,
		ProgressMessage: b.ProgressMessage}
	if hp.Lease, err = input.Seconds("lease_seconds", b.LeaseSeconds, maxLeaseSeconds); err != nil {
		return err
	}
	if int64(len(b.Checkpoint)) > s.cfg.MaxPayloadBytes {
		return tooLarge("checkpoint", "is over the limit of %d bytes", s.cfg.MaxPayloadBytes)
	}
	if hp.Checkpoint, err = input.CleanJSON("checkpoint", b.Checkpoint); err != nil {
		return err
	}
	res, err := s.client.Heartbeat(r.Context(), id, hp)
	err = jobErr(err, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, heartbeatAnswer{LeaseUntil: skiplock.ViewTime(res.LeaseUntil), CancelRequested: res.CancelRequested,
		PauseRequested: res.PauseRequested})
	return nil
}

type completeBody struct {
	WorkerID string            `json:"worker_id"`
	Attempt  *int              `json:"attempt"`
	Queue    *string           `json:"queue"`
	Result   json.RawMessage   `json:"result"`
	Next     []json.RawMessage `json:"next"`
}

type completeAnswer struct {
	Job  *skiplock.JobView   `json:"job"`
	Next []*skiplock.JobView `json:"next"`
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request, p *principal) error {
	var b completeBody
	if err := decodeBody(r, s.cfg.MaxBatchBodyBytes, &b); err != nil {
		return err
	}
	h, err := s.heldJob(r, p, b.WorkerID, b.Attempt, b.Queue)
	if err != nil {
		return err
	}
	id := h.id
	if int64(len(b.Result)) > s.cfg.MaxPayloadBytes {
		return tooLarge("result", "is over the limit of %d bytes", s.cfg.MaxPayloadBytes)
	}
	result, err := input.CleanJSON("result", b.Result)
	if err != nil {
		return err
	}
	if len(b.Next) > DefaultMaxBatchJobs {
		return badRequest("next", "must hold at most %d jobs, got %d", DefaultMaxBatchJobs, len(b.Next))
	}
	next := make([]skiplock.InsertManyParams, len(b.Next))
	for i, raw := range b.Next {
		if next[i], err = s.parseSpec(raw, fmt.Sprintf("next[%d]", i), p); err != nil {
			return err
		}
	}
	if err := s.checkParents(r.Context(), "next", p, next); err != nil {
		return err
	}
	j, res, err := s.client.Complete(r.Context(), id, skiplock.CompleteParams{WorkerID: b.WorkerID,
		Attempt: h.attempt, Queue: h.queue, Result: result, Next: next})
	err = jobErr(missingParent(err, "next", next), id)
	if err != nil {
		return err
	}
	s.finished(j)
	out := completeAnswer{Job: skiplock.NewJobView(j), Next: make([]*skiplock.JobView, len(res))}
	for i, n := range res {
		out.Next[i] = skiplock.NewJobView(n.Job)
		if !n.Duplicate {
			s.inserted(n.Job)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type failBody struct {
	WorkerID string  `json:"worker_id"`
	Attempt  *int    `json:"attempt"`
	Queue    *string `json:"queue"`
	Error    *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Retryable      *bool    `json:"retryable"`
	RetryInSeconds *float64 `json:"retry_in_seconds"`
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, p *principal) error {
	var b failBody
	if err := decodeBody(r, s.singleBodyLimit(), &b); err != nil {
		return err
	}
	h, err := s.heldJob(r, p, b.WorkerID, b.Attempt, b.Queue)
	if err != nil {
		return err
	}
	id := h.id
	if b.Error == nil {
		return badRequest("error", `is required: {"type": …, "message": …}`)
	}
	fp := skiplock.FailParams{WorkerID: b.WorkerID, Attempt: h.attempt, Queue: h.queue, Retryable: b.Retryable == nil || *b.Retryable,
		ErrorType: b.Error.Type, Message: b.Error.Message}
	if b.RetryInSeconds != nil {
		d, err := input.Seconds("retry_in_seconds", b.RetryInSeconds, input.MaxDelaySeconds)
		if err != nil {
			return err
		}
		fp.RetryIn = &d
	}
	j, err := s.client.Fail(r.Context(), id, fp)
	err = jobErr(err, id)
	if err != nil {
		return err
	}
	s.finished(j)
	writeJSON(w, http.StatusOK, jobAnswer{Job: skiplock.NewJobView(j)})
	return nil
}

// finished counts a job a worker reported on.
func (s *Server) finished(j *skiplock.JobRow) {
	switch j.State {
	case skiplock.StateCompleted:
		timed := j.StartedAt != nil && j.FinishedAt != nil
		var took time.Duration
		if timed {
			took = j.FinishedAt.Sub(*j.StartedAt)
		}
		s.metrics.completion(j.Kind, j.Queue, took, timed)
	case skiplock.StateFailed:
		s.metrics.failed.WithLabelValues(s.metrics.pairs.of(j.Kind, j.Queue)).Inc()
	case skiplock.StateScheduled, skiplock.StatePending:
		s.metrics.retried.WithLabelValues(s.metrics.pairs.of(j.Kind, j.Queue)).Inc()
	}
}
