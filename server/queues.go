package server

import (
	"context"
	"net/http"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/internal/input"
)

// QueueView is a queue as GET /v1/queues shows it.
type QueueView struct {
	Name                    string                      `json:"name"`
	Paused                  bool                        `json:"paused"`
	Counts                  map[skiplock.JobState]int64 `json:"counts"`
	OldestPendingAgeSeconds float64                     `json:"oldest_pending_age_seconds"`
	// Flow is the flow rules that apply to the queue, with their use
	// (docs/flow-control.md); absent when none does.
	Flow []FlowView `json:"flow,omitempty"`
}

// liveStates are the states a queue's counts always show.
var liveStates = []skiplock.JobState{skiplock.StateScheduled, skiplock.StateWaiting, skiplock.StatePending,
	skiplock.StateRunning, skiplock.StatePaused}

// NewQueueView answers the view of q, with a count (maybe 0) for each live state.
func NewQueueView(q skiplock.QueueInfo) QueueView {
	v := QueueView{Name: q.Name, Paused: q.Paused, Counts: map[skiplock.JobState]int64{},
		OldestPendingAgeSeconds: q.OldestPendingAge.Seconds()}
	for _, st := range liveStates {
		v.Counts[st] = 0
	}
	for st, n := range q.Counts {
		v.Counts[st] = n
	}
	for _, f := range q.Flow {
		v.Flow = append(v.Flow, newFlowView(f))
	}
	return v
}

// unscoped refuses tenant-scoped tokens on views that add up every tenant.
func unscoped(p *principal) error {
	if p.scoped {
		return forbidden("this view counts the jobs of every tenant; it needs a token without a tenant scope")
	}
	return nil
}

func (s *Server) listQueues(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := unscoped(p); err != nil {
		return err
	}
	queues, err := s.client.QueueList(r.Context(), false)
	if err != nil {
		return err
	}
	out := make([]QueueView, len(queues))
	for i, q := range queues {
		out[i] = NewQueueView(q)
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": out})
	return nil
}

func (s *Server) queueAction(pause bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		name := r.PathValue("queue")
		if err := input.CheckText("queue", name, input.MaxNameBytes); err != nil {
			return err
		}
		if err := unscoped(p); err != nil {
			return err
		}
		// An unknown queue answers 404 (a typo pauses nothing) unless the
		// body asks to create it: {"create": true}.
		var body struct {
			Create bool `json:"create"`
		}
		if err := decodeBody(r, s.singleBodyLimit(), &body); err != nil {
			return err
		}
		opts := skiplock.QueueActionOpts{Create: body.Create}
		var err error
		if pause {
			err = s.client.QueuePause(r.Context(), name, opts)
		} else {
			err = s.client.QueueResume(r.Context(), name, opts)
		}
		if err != nil {
			return err
		}
		view, err := QueueAfter(r.Context(), s.client, name, pause)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"queue": view})
		return nil
	}
}

// QueueAfter answers the view of queue name just paused or resumed, as
// POST /v1/queues/{queue}/pause and /resume show it (the CLI prints the same),
// read from the primary: a replica may not show the action yet.
func QueueAfter(ctx context.Context, c *skiplock.Client, name string, paused bool) (QueueView, error) {
	queues, err := c.QueueList(skiplock.ReadPrimary(ctx), false)
	if err != nil {
		return QueueView{}, err
	}
	for _, q := range queues {
		if q.Name == name {
			return NewQueueView(q), nil
		}
	}
	return NewQueueView(skiplock.QueueInfo{Name: name, Paused: paused}), nil
}

// listKinds answers the contracts in force: the stored set (its newest
// version), else the server's file; version is 0 when none is stored.
func (s *Server) listKinds(w http.ResponseWriter, r *http.Request, _ *principal) error {
	if err := s.client.RefreshContracts(r.Context()); err != nil {
		return err
	}
	set := s.client.Contracts() // the client enforces the same set
	kinds := set.Kinds()
	if kinds == nil {
		kinds = []contract.KindInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"kinds": kinds, "version": s.client.ContractsVersion(),
		"strict": set != nil && set.Strict})
	return nil
}

type statsAnswer struct {
	Totals     map[skiplock.JobState]int64            `json:"totals"`
	ByKind     map[string]map[skiplock.JobState]int64 `json:"by_kind"`
	Throughput struct {
		LastMinute map[skiplock.JobState]int64 `json:"last_minute"`
		LastHour   map[skiplock.JobState]int64 `json:"last_hour"`
	} `json:"throughput"`
	// ReplicaLagSeconds is how far behind its primary the replica these
	// counts come from is; null when the server reads no replica.
	ReplicaLagSeconds *float64 `json:"replica_lag_seconds"`
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := unscoped(p); err != nil {
		return err
	}
	st, err := s.client.Stats(r.Context())
	if err != nil {
		return err
	}
	out := statsAnswer{Totals: map[skiplock.JobState]int64{}, ByKind: map[string]map[skiplock.JobState]int64{}}
	for _, state := range skiplock.AllStates() {
		out.Totals[state] = 0
	}
	for state, kinds := range st.ByStateKind {
		for kind, n := range kinds {
			out.Totals[state] += n
			if out.ByKind[kind] == nil {
				out.ByKind[kind] = map[skiplock.JobState]int64{}
			}
			out.ByKind[kind][state] += n
		}
	}
	out.Throughput.LastMinute = orEmpty(st.FinishedLastMinute)
	out.Throughput.LastHour = orEmpty(st.FinishedLastHour)
	lag, ok, err := s.client.ReplicaLag(r.Context())
	if err != nil {
		return err
	}
	if ok {
		secs := lag.Seconds()
		out.ReplicaLagSeconds = &secs
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func orEmpty(m map[skiplock.JobState]int64) map[skiplock.JobState]int64 {
	if m == nil {
		return map[skiplock.JobState]int64{}
	}
	return m
}
