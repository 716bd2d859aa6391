package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
)

// Operations: a bulk action that runs past Config.BulkSyncLimit, or is
// asked to run apart ("async": true), goes on as an operation that
// GET /v1/operations/{id} answers and DELETE /v1/operations/{id} cancels
// between two batches. A finished operation is kept for operationKeep,
// and at most maxOperations are kept.
const (
	DefaultBulkSyncLimit = 20 * time.Second
	operationKeep        = time.Hour
	maxOperations        = 1000
	// operationCountBatch is the page of ids an operation counts its jobs
	// with before it acts, for its total.
	operationCountBatch = 10000
)

// The states of an operation.
const (
	opRunning   = "running"
	opCompleted = "completed"
	opFailed    = "failed"
	opCancelled = "cancelled"
)

// operationView is an operation as the API answers it.
type operationView struct {
	ID         string       `json:"id"`
	Action     string       `json:"action"`
	State      string       `json:"state"`
	Done       int          `json:"done"`
	Matched    int          `json:"matched"`
	Total      int          `json:"total"`
	DryRun     bool         `json:"dry_run"`
	CreatedAt  time.Time    `json:"created_at"`
	FinishedAt *time.Time   `json:"finished_at"`
	Error      *errorDetail `json:"error,omitempty"`
}

type operationAnswer struct {
	Operation operationView `json:"operation"`
}

// operation is one bulk action running, or run, in the background.
type operation struct {
	mu     sync.Mutex
	view   operationView
	err    error   // why it failed, for a request that waited for it
	tenant *string // the scoped token's tenant that started it
	cancel context.CancelFunc
	done   chan struct{}
}

func (op *operation) snapshot() operationView {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.view
}

// operations are the server's operations by id.
type operations struct {
	mu   sync.Mutex
	byID map[string]*operation
	wg   sync.WaitGroup
}

// start runs a bulk action as an operation on ctx (the server's): it
// counts the jobs, then acts on them, a batch at a time.
func (o *operations) start(ctx context.Context, c *skiplock.Client, p skiplock.BulkParams, tenant *string) *operation {
	ctx, cancel := context.WithCancel(ctx)
	op := &operation{tenant: tenant, cancel: cancel, done: make(chan struct{}),
		view: operationView{ID: operationID(), Action: string(p.Action), State: opRunning, DryRun: p.DryRun,
			CreatedAt: time.Now().UTC()}}
	o.add(op)
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer close(op.done)
		defer cancel()
		res, err := op.run(ctx, c, p)
		op.finish(res, err)
	}()
	return op
}

// run counts the jobs (the total), then acts on them.
func (op *operation) run(ctx context.Context, c *skiplock.Client, p skiplock.BulkParams) (skiplock.BulkResult, error) {
	count := p
	count.DryRun, count.BatchSize, count.Progress = true, operationCountBatch, nil
	n, err := c.JobsBulk(ctx, count)
	if err != nil {
		return skiplock.BulkResult{}, err
	}
	op.mu.Lock()
	op.view.Total = n.Matched
	op.mu.Unlock()
	if p.DryRun {
		return n, nil
	}
	p.Progress = func(done int) {
		op.mu.Lock()
		op.view.Done = done
		op.mu.Unlock()
	}
	return c.JobsBulk(ctx, p)
}

func (op *operation) finish(res skiplock.BulkResult, err error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	now := time.Now().UTC()
	op.view.FinishedAt = &now
	op.view.Done, op.view.Matched = res.Done, res.Matched
	switch {
	case err == nil:
		op.view.State = opCompleted
	case errors.Is(err, context.Canceled):
		op.view.State = opCancelled
	default:
		op.view.State, op.err = opFailed, err
		ae := toAPIError(err)
		op.view.Error = &errorDetail{Code: ae.code, Message: ae.message, Field: ae.field}
	}
}

// add keeps op, and forgets finished operations past their keep or over
// the bound.
func (o *operations) add(op *operation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byID == nil {
		o.byID = map[string]*operation{}
	}
	var oldest *operation
	for id, old := range o.byID {
		v := old.snapshot()
		if v.FinishedAt == nil {
			continue
		}
		if time.Since(*v.FinishedAt) > operationKeep {
			delete(o.byID, id)
		} else if oldest == nil || v.FinishedAt.Before(*oldest.snapshot().FinishedAt) {
			oldest = old
		}
	}
	if len(o.byID) >= maxOperations && oldest != nil {
		delete(o.byID, oldest.view.ID)
	}
	o.byID[op.view.ID] = op
}

// get answers the operation id as p may see it: another tenant's is not
// found.
func (o *operations) get(id string, p *principal) (*operation, error) {
	o.mu.Lock()
	op := o.byID[id]
	o.mu.Unlock()
	if op == nil || (p.scoped && (op.tenant == nil || *op.tenant != p.tenant)) {
		return nil, notFound("no operation %q (finished operations are kept for %s)", id, operationKeep)
	}
	return op, nil
}

// stop cancels every operation and waits for them to end (Server.Close).
func (o *operations) stop() {
	o.mu.Lock()
	for _, op := range o.byID {
		op.cancel()
	}
	o.mu.Unlock()
	o.wg.Wait()
}

func operationID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// getOperation answers an operation.
func (s *Server) getOperation(w http.ResponseWriter, r *http.Request, p *principal) error {
	op, err := s.ops.get(r.PathValue("id"), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, operationAnswer{op.snapshot()})
	return nil
}

// cancelOperation cancels a running operation: it stops before its next
// batch (the batch in progress is rolled back). It answers the operation
// once it has stopped, or as it is when the request ends first; a
// finished operation is answered as it is.
func (s *Server) cancelOperation(w http.ResponseWriter, r *http.Request, p *principal) error {
	op, err := s.ops.get(r.PathValue("id"), p)
	if err != nil {
		return err
	}
	op.cancel()
	select {
	case <-op.done:
	case <-r.Context().Done():
	}
	writeJSON(w, http.StatusOK, operationAnswer{op.snapshot()})
	return nil
}
