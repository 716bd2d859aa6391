package server

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/skiplock/skiplock/server/dashboard"
)

// perm is what a route needs of a token's role.
type perm int

const (
	permNone    perm = iota // no token needed (/healthz)
	permRead                // every role
	permEnqueue             // admin, producer
	permWork                // admin, worker
	permAdmin               // admin
)

// handlerFunc is a route's handler: it answers through the writer and
// returns an error to answer instead (see writeError).
type handlerFunc func(w http.ResponseWriter, r *http.Request, p *principal) error

func (s *Server) buildHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, need perm, h handlerFunc) {
		s.routes = append(s.routes, pattern)
		mux.Handle(pattern, s.route(pattern, need, h))
	}
	handle("POST /v1/jobs", permEnqueue, s.enqueue)
	handle("POST /v1/jobs/batch", permEnqueue, s.enqueueBatch)
	handle("POST /v1/jobs/bulk", permAdmin, s.jobsBulk)
	handle("GET /v1/operations/{id}", permAdmin, s.getOperation)
	handle("DELETE /v1/operations/{id}", permAdmin, s.cancelOperation)
	handle("GET /v1/jobs", permRead, s.listJobs)
	handle("GET /v1/jobs/{id}", permRead, s.getJob)
	handle("POST /v1/jobs/{id}/cancel", permAdmin, s.jobAction(s.client.JobCancel))
	handle("POST /v1/jobs/{id}/retry", permAdmin, s.jobAction(s.client.JobRetry))
	handle("POST /v1/jobs/{id}/pause", permAdmin, s.jobAction(s.client.JobPause))
	handle("POST /v1/jobs/{id}/resume", permAdmin, s.jobAction(s.client.JobResume))
	handle("POST /v1/jobs/{id}/heartbeat", permWork, s.heartbeat)
	handle("POST /v1/jobs/{id}/complete", permWork, s.complete)
	handle("POST /v1/jobs/complete", permWork, s.completeMany)
	handle("POST /v1/jobs/{id}/fail", permWork, s.fail)
	handle("GET /v1/workflows/{workflow_id}", permRead, s.getWorkflow)
	handle("GET /v1/queues", permRead, s.listQueues)
	handle("POST /v1/queues/{queue}/claim", permWork, s.claim)
	handle("POST /v1/queues/{queue}/pause", permAdmin, s.queueAction(true))
	handle("POST /v1/queues/{queue}/resume", permAdmin, s.queueAction(false))
	handle("GET /v1/kinds", permRead, s.listKinds)
	handle("GET /v1/stats", permRead, s.stats)
	handle("GET /v1/stats/history", permRead, s.history)
	handle("GET /v1/events", permRead, s.streamEvents)
	handle("GET /v1/schedules", permRead, s.listSchedules)
	handle("PUT /v1/schedules/{key}", permEnqueue, s.putSchedule)
	handle("DELETE /v1/schedules/{key}", permEnqueue, s.deleteSchedule)
	handle("GET /v1/janitor", permRead, s.janitorStatus)
	handle("GET /metrics", permRead, s.serveMetrics)
	handle("GET /healthz", permNone, s.healthz)
	handle("GET /v1/activity", permRead, s.activity)
	handle("GET /v1/processes", permRead, s.listProcesses)
	dashboard.New(dashboard.Config{Client: s.client, Backend: dashboardBackend{s}, Logger: s.log}).Register(mux)
	return s.recoverer(s.jsonFallback(mux))
}

// route authenticates and authorizes a request, runs h and answers its
// error, and counts the request.
func (s *Server) route(pattern string, need perm, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() { s.metrics.request(pattern, rec.status) }()
		var p *principal
		if need != permNone {
			var err error
			if p, err = s.auth.authenticate(r); err != nil {
				s.writeError(rec, r, err)
				return
			}
			if !p.can(need) {
				s.writeError(rec, r, &apiError{status: http.StatusForbidden, code: "permission_denied",
					message: fmt.Sprintf("role %q may not %s %s", p.role, r.Method, r.URL.Path)})
				return
			}
		}
		if err := h(rec, r, p); err != nil {
			s.writeError(rec, r, err)
		}
	})
}

// jsonFallback answers the mux's own 404 and 405 in JSON.
func (s *Server) jsonFallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		buf := &bufferedWriter{header: http.Header{}}
		h.ServeHTTP(buf, r)
		switch buf.status {
		case http.StatusNotFound:
			s.writeError(w, r, &apiError{status: http.StatusNotFound, code: "not_found",
				message: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", buf.header.Get("Allow"))
			s.writeError(w, r, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
				message: fmt.Sprintf("%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, buf.header.Get("Allow"))})
		default:
			for k, v := range buf.header {
				w.Header()[k] = v
			}
			w.WriteHeader(buf.status)
			_, _ = w.Write(buf.body.Bytes())
		}
	})
}

// recoverer answers a panic with 500 and logs it; no input should get here.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil || v == http.ErrAbortHandler {
				if v != nil {
					panic(v)
				}
				return
			}
			s.log.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v),
				"stack", string(debug.Stack()))
			s.writeError(w, r, &apiError{status: http.StatusInternalServerError, code: "internal",
				message: "internal error"})
		}()
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// bufferedWriter holds a response the mux made up for an unrouted request.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }
func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
