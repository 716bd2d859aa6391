package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/server/dashboard"
)

// dashboardBackend lets the dashboard authenticate and follow job changes
// exactly as the API does: the same token store and cache, the same feed.
type dashboardBackend struct{ s *Server }

// Authenticate answers who holds secret ("" when none was given).
func (b dashboardBackend) Authenticate(ctx context.Context, secret string) (*dashboard.Principal, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := b.s.auth.tokenCount(ctx)
	if err != nil {
		return nil, err
	}
	p, err := b.s.auth.bySecret(ctx, n, secret, secret != "")
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusUnauthorized {
		return nil, dashboard.ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	return &dashboard.Principal{Role: p.role, Tenant: p.tenant, Scoped: p.scoped, Name: p.name,
		Open: n == 0}, nil
}

// Follow calls fn with each job change visible to tenant (nil: all) until
// ctx or the server ends.
func (b dashboardBackend) Follow(ctx context.Context, tenant *string, fn func(dashboard.Change)) error {
	sub := &subscriber{ch: make(chan *jobEvent, eventBuffer), tenant: tenant}
	if err := b.s.events.subscribe(sub); err != nil {
		return err
	}
	defer b.s.events.unsubscribe(sub)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-b.s.ctx.Done():
			return nil
		case e := <-sub.ch:
			c := dashboard.Change{ID: e.ID, State: e.State, Progress: e.Progress}
			if e.WorkflowID != nil {
				c.WorkflowID = *e.WorkflowID
			}
			fn(c)
		}
	}
}

// Done ends when the server closes, so that event streams end with it.
func (b dashboardBackend) Done() <-chan struct{} { return b.s.ctx.Done() }

// activity answers GET /v1/activity: the last hour's finished jobs per
// minute and the running jobs and workers (the dashboard's overview).
func (s *Server) activity(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := unscoped(p); err != nil {
		return err
	}
	a, err := s.client.Activity(r.Context(), time.Hour, time.Minute)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// history answers GET /v1/stats/history: the attempts that ended per
// bucket by outcome, the failure rate, the queue depth and the wait and run
// time quantiles over 1h, 24h or 7d, from the history table.
func (s *Server) history(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := unscoped(p); err != nil {
		return err
	}
	q := r.URL.Query()
	h, err := s.client.History(r.Context(), skiplock.HistoryParams{Range: q.Get("range"), Queue: q.Get("queue"),
		Kind: q.Get("kind")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h)
	return nil
}
