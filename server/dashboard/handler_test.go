package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// cookieBackend knows three tokens by their secret.
type cookieBackend struct{}

func (cookieBackend) Authenticate(_ context.Context, secret string) (*Principal, error) {
	switch secret {
	case "admin":
		return &Principal{Role: "admin", Name: "admin"}, nil
	case "viewer":
		return &Principal{Role: "viewer", Name: "viewer"}, nil
	case "acme":
		return &Principal{Role: "admin", Tenant: "acme", Scoped: true, Name: "acme"}, nil
	}
	return nil, ErrUnauthenticated
}

func (cookieBackend) Follow(ctx context.Context, _ *string, _ func(Change)) error {
	<-ctx.Done()
	return nil
}

type handlerBundle struct {
	t      *testing.T
	client *skiplock.Client
	mux    *http.ServeMux
	dash   *Dashboard
}

func setup(t *testing.T) *handlerBundle {
	c, err := skiplock.NewClient(sqlitetest.New(t), &skiplock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	d := New(Config{Client: c, Backend: cookieBackend{}})
	d.Register(mux)
	return &handlerBundle{t: t, client: c, mux: mux, dash: d}
}

func (b *handlerBundle) do(method, path, secret string, form url.Values) *httptest.ResponseRecorder {
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if secret != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: secret})
	}
	rec := httptest.NewRecorder()
	b.mux.ServeHTTP(rec, req)
	return rec
}

func (b *handlerBundle) insert(kind, tenant string, payload string) *skiplock.JobRow {
	res, err := b.client.Insert(context.Background(), skiplock.RawArgs{KindName: kind, Payload: []byte(payload)},
		&skiplock.InsertOpts{Tenant: tenant})
	if err != nil {
		b.t.Fatal(err)
	}
	j, err := b.client.JobPause(context.Background(), res.Job.ID)
	if err != nil {
		b.t.Fatal(err)
	}
	return j
}

// Pages need a session; a payload's markup is escaped; posts need the
// session's CSRF token and an admin role; a tenant sees only its tenant.
func TestHandlerAuthCSRFAndEscaping(t *testing.T) {
	b := setup(t)
	j := b.insert("email", "globex", `{"html":"<script>alert(1)</script>"}`)
	if rec := b.do("GET", "/jobs", "", nil); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
		t.Fatalf("no session: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	rec := b.do("GET", "/jobs/"+itoa(j.ID), "viewer", nil)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "<script>alert") ||
		!strings.Contains(rec.Body.String(), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("job page: %d, payload not shown escaped", rec.Code)
	}
	path := "/jobs/" + itoa(j.ID) + "/resume"
	for _, c := range []struct {
		secret, csrf string
		want         int
	}{
		{"admin", "", http.StatusForbidden},
		{"admin", b.dash.csrfToken("viewer"), http.StatusForbidden},
		{"viewer", b.dash.csrfToken("viewer"), http.StatusForbidden},
		{"acme", b.dash.csrfToken("acme"), http.StatusNotFound},
		{"admin", b.dash.csrfToken("admin"), http.StatusSeeOther},
	} {
		if rec := b.do("POST", path, c.secret, url.Values{"csrf": {c.csrf}}); rec.Code != c.want {
			t.Fatalf("%s posting with csrf %q: %d, want %d", c.secret, c.csrf, rec.Code, c.want)
		}
	}
	got, err := b.client.JobGet(context.Background(), j.ID)
	if err != nil || got.State != skiplock.StatePending {
		t.Fatalf("after resume: %v %v", got.State, err)
	}
	if rec := b.do("GET", "/jobs?kind=email", "acme", nil); strings.Contains(rec.Body.String(), `data-id="`+itoa(j.ID)+`"`) {
		t.Fatal("a tenant lists another tenant's job")
	}
	if rec := b.do("GET", "/", "acme", nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("overview for a tenant: %d", rec.Code)
	}
}

// Every page renders for an admin on an empty and a filled database.
func TestHandlerPagesRender(t *testing.T) {
	b := setup(t)
	for _, path := range []string{"/", "/jobs", "/workflows", "/dead", "/schedules", "/queues", "/login"} {
		if rec := b.do("GET", path, "admin", nil); rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	b.insert("report", "", `{}`)
	for _, path := range []string{"/", "/jobs?state=paused", "/queues", "/jobs/99999"} {
		want := http.StatusOK
		if path == "/jobs/99999" {
			want = http.StatusNotFound
		}
		if rec := b.do("GET", path, "admin", nil); rec.Code != want {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	if rec := b.do("GET", "/jobs?state=bogus", "admin", nil); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "state: unknown state") {
		t.Fatalf("bad state: %d", rec.Code)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The jobs page filters by tag, worker, error type and creation time.
func TestHandlerFilters(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	vip, err := b.client.Insert(ctx, skiplock.RawArgs{KindName: "mail", Payload: []byte(`{}`)},
		&skiplock.InsertOpts{Tags: []string{"vip"}})
	if err != nil {
		t.Fatal(err)
	}
	plain := b.insert("mail", "", `{}`)
	row := func(id int64) string { return `data-id="` + itoa(id) + `"` }
	body := b.do("GET", "/jobs?tag=vip", "admin", nil).Body.String()
	if !strings.Contains(body, row(vip.Job.ID)) || strings.Contains(body, row(plain.ID)) {
		t.Fatal("tag filter")
	}
	body = b.do("GET", "/jobs?created_to=2000-01-01T00:00", "admin", nil).Body.String()
	if strings.Contains(body, row(vip.Job.ID)) || strings.Contains(body, row(plain.ID)) {
		t.Fatal("created_to in the past lists jobs")
	}
	if rec := b.do("GET", "/jobs?created_from=yesterday", "admin", nil); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "created_from") {
		t.Fatalf("bad time: %d", rec.Code)
	}
	if rec := b.do("GET", "/bulk?action=retry&tag=vip", "admin", nil); rec.Code != http.StatusBadRequest {
		t.Fatalf("bulk with a tag filter: %d", rec.Code)
	}
}
