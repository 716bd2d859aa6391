package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/skiplock/skiplock"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// ErrUnauthenticated is what a Backend answers for a missing or unknown
// token when tokens are required.
var ErrUnauthenticated = errors.New("missing or unknown token")

// Principal is who looks at the dashboard: a token's role and scope.
type Principal struct {
	Role   string
	Tenant string
	Scoped bool
	Name   string
	// Open is true when no token exists and the server lets everyone in.
	Open bool
}

// CanAct reports whether the principal may retry, cancel and pause.
func (p *Principal) CanAct() bool { return p.Role == "admin" }

// tenantFilter is the tenant a listing must keep to (nil: any), given the
// one asked for.
func (p *Principal) tenantFilter(asked *string) *string {
	if p.Scoped {
		t := p.Tenant
		return &t
	}
	return asked
}

// Change is one job change from the server's event feed.
type Change struct {
	ID         int64
	State      skiplock.JobState
	Progress   int
	WorkflowID string
}

// Backend is what the dashboard needs of the server: token checks and the
// event feed, shared with the API.
type Backend interface {
	// Authenticate answers who holds secret ("" when the browser sent
	// none); ErrUnauthenticated when that is not enough.
	Authenticate(ctx context.Context, secret string) (*Principal, error)
	// Follow calls fn with each change of a job of tenant (nil: any)
	// until ctx ends.
	Follow(ctx context.Context, tenant *string, fn func(Change)) error
}

// Config configures a Dashboard.
type Config struct {
	Client  *skiplock.Client
	Backend Backend
	Logger  *slog.Logger
}

// Dashboard serves the web UI.
type Dashboard struct {
	client  *skiplock.Client
	backend Backend
	log     *slog.Logger
	pages   map[string]*template.Template
	// openKey signs the CSRF token of a server open without tokens.
	openKey []byte
	cop     *http.CrossOriginProtection
}

// New returns a dashboard; it panics only if its embedded templates do not
// parse, which the package's tests rule out.
func New(cfg Config) *Dashboard {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &Dashboard{client: cfg.Client, backend: cfg.Backend, log: cfg.Logger, pages: mustParsePages(),
		openKey: key, cop: http.NewCrossOriginProtection()}
}

// Register adds the dashboard's routes to mux; none is under /v1.
func (d *Dashboard) Register(mux *http.ServeMux) {
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", cacheFor(time.Hour, http.FileServerFS(static))))
	mux.HandleFunc("GET /login", d.loginPage)
	mux.Handle("POST /login", d.cop.Handler(http.HandlerFunc(d.login)))
	mux.Handle("POST /logout", d.cop.Handler(http.HandlerFunc(d.logout)))
	page := func(pattern string, h pageFunc) { mux.Handle(pattern, d.page(h)) }
	act := func(pattern string, h pageFunc) { mux.Handle(pattern, d.cop.Handler(d.action(h))) }
	page("GET /{$}", d.overview)
	page("GET /jobs", d.jobs)
	page("GET /jobs/{id}", d.job)
	page("GET /workflows", d.workflows)
	page("GET /workflows/{id}", d.workflow)
	page("GET /dead", d.deadLetters)
	page("GET /schedules", d.schedules)
	page("GET /queues", d.queues)
	page("GET /processes", d.processes)
	page("GET /bulk", d.bulkConfirm)
	act("POST /jobs/{id}/{action}", d.jobAction)
	act("POST /queues/{queue}/{action}", d.queueAction)
	act("POST /bulk", d.bulk)
	mux.Handle("GET /ui/events", d.page(d.events))
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(d.Seconds())))
		h.ServeHTTP(w, r)
	})
}

// pageFunc renders a page or acts for a principal; an error is shown on
// the error page with its status.
type pageFunc func(w http.ResponseWriter, r *http.Request, v *view) error

// view is what every template gets: the principal, the CSRF token, the
// page's name for the navigation, and its data.
type view struct {
	P     *Principal
	CSRF  string
	Page  string
	Title string
	Data  any
	Flash string
	// Replica is the replica the page's lists and counts were read from;
	// nil when the server reads none.
	Replica *replicaView
	r       *http.Request
}

// replicaView is the lag a page shows of the replica it read.
type replicaView struct {
	Lag   time.Duration
	Known bool
}

// replica reads the lag of the replica the dashboard reads from; nil when
// it reads none. A lag it cannot read is shown as unknown.
func (d *Dashboard) replica(ctx context.Context) *replicaView {
	lag, ok, err := d.client.ReplicaLag(ctx)
	if !ok {
		return nil
	}
	if err != nil {
		d.log.Warn("dashboard: replica lag", "error", err)
		return &replicaView{}
	}
	return &replicaView{Lag: lag, Known: true}
}

// page authenticates (or sends to the login page) and runs h.
func (d *Dashboard) page(h pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := d.viewFor(w, r)
		if !ok {
			return
		}
		if err := h(w, r, v); err != nil {
			d.fail(w, r, v, err)
		}
	})
}

// action is page for a POST: it also checks the CSRF token and the role.
func (d *Dashboard) action(h pageFunc) http.Handler {
	return d.page(func(w http.ResponseWriter, r *http.Request, v *view) error {
		if !validCSRF(r.PostFormValue("csrf"), v.CSRF) {
			return &pageError{status: http.StatusForbidden, msg: "the form is stale or came from another site: reload the page and try again"}
		}
		if !v.P.CanAct() {
			return &pageError{status: http.StatusForbidden, msg: fmt.Sprintf("role %q may look but not act; an admin token may", v.P.Role)}
		}
		return h(w, r, v)
	})
}

// pageError is an error shown with a status.
type pageError struct {
	status int
	msg    string
}

func (e *pageError) Error() string { return e.msg }

func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, v *view, err error) {
	status, msg := http.StatusInternalServerError, "internal error; the server log says more"
	var pe *pageError
	var ve *skiplock.ValidationError
	switch {
	case errors.As(err, &pe):
		status, msg = pe.status, pe.msg
	case errors.Is(err, skiplock.ErrNotFound):
		status, msg = http.StatusNotFound, err.Error()
	case errors.As(err, &ve):
		status, msg = http.StatusBadRequest, err.Error()
	case errors.Is(err, skiplock.ErrWrongState):
		status, msg = http.StatusConflict, err.Error()
	case errors.Is(err, context.Canceled):
		return
	default:
		d.log.Error("dashboard", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	w.WriteHeader(status)
	v.Title, v.Page, v.Data = http.StatusText(status), "", msg
	d.render(w, "error", v)
}

// render writes page name, buffered so that a template error never sends
// half a page.
func (d *Dashboard) render(w http.ResponseWriter, name string, v *view) {
	if v.r != nil {
		v.Replica = d.replica(v.r.Context())
	}
	var buf bytes.Buffer
	if err := d.pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		d.log.Error("dashboard: render", "page", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	_, _ = w.Write(buf.Bytes())
}

func mustParsePages() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := n[len("templates/") : len(n)-len(".html")]
		if name == "layout" {
			continue
		}
		t := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n))
		pages[name] = t
	}
	return pages
}
