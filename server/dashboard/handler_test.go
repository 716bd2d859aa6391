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
	for _, path := range []string{"/", "/jobs", "/workflows", "/dead", "/schedules", "/queues", "/processes", "/login"} {
		if rec := b.do("GET", path, "admin", nil); rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	b.insert("report", "", `{}`)
	for _, path := range []string{"/", "/jobs?state=paused", "/queues", "/processes", "/jobs/99999"} {
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

// The search box opens a job by id, and lists the jobs of an idempotency
// key otherwise (or when no job the principal sees has that id), saying so;
// a tenant finds only its tenant's jobs either way.
func TestHandlerSearchByIDOrKey(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	keyed := func(tenant, key string) int64 {
		res, err := b.client.Insert(ctx, skiplock.RawArgs{KindName: "order", Payload: []byte(`{}`)},
			&skiplock.InsertOpts{Tenant: tenant, IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return res.Job.ID
	}
	ours, theirs, numeric := keyed("acme", "order-7"), keyed("globex", "order-7"), keyed("", "424242")
	row := func(id int64) string { return `data-id="` + itoa(id) + `"` }
	search := func(secret, term string) string {
		t.Helper()
		rec := b.do("GET", "/jobs?q="+url.QueryEscape(term), secret, nil)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("search %q: %d", term, rec.Code)
		}
		return rec.Header().Get("Location")
	}
	if got := search("admin", " #"+itoa(ours)); got != "/jobs/"+itoa(ours) {
		t.Fatalf("search by id: to %s", got)
	}
	for _, c := range []struct {
		secret, term string
		want, not    []int64
	}{
		{"admin", "order-7", []int64{ours, theirs}, []int64{numeric}},
		{"acme", "order-7", []int64{ours}, []int64{theirs}},
		{"admin", "424242", []int64{numeric}, []int64{ours}},
		{"acme", itoa(theirs), nil, []int64{theirs}},
	} {
		loc := search(c.secret, c.term)
		if !strings.HasPrefix(loc, "/jobs?idempotency_key=") {
			t.Fatalf("%s searching %q: to %s, want the key's jobs", c.secret, c.term, loc)
		}
		body := b.do("GET", loc, c.secret, nil).Body.String()
		if !strings.Contains(body, `id="search-mode"`) || !strings.Contains(body, "Searched by idempotency key") {
			t.Fatalf("%s searching %q: the page does not say it searched by key", c.secret, c.term)
		}
		for _, id := range c.want {
			if !strings.Contains(body, row(id)) {
				t.Errorf("%s searching %q: job %d missing", c.secret, c.term, id)
			}
		}
		for _, id := range c.not {
			if strings.Contains(body, row(id)) {
				t.Errorf("%s searching %q: job %d listed", c.secret, c.term, id)
			}
		}
	}
	if rec := b.do("GET", "/bulk?action=cancel&idempotency_key=order-7", "admin", nil); rec.Code != http.StatusBadRequest {
		t.Fatalf("bulk with a key filter: %d", rec.Code)
	}
}

// Bulk pause and resume show how many jobs match, act once confirmed with
// the session's CSRF token, and only for an admin; a tenant's admin acts
// on its tenant's jobs alone.
func TestHandlerBulkPauseResume(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	tenantOf := map[int64]string{}
	for _, tenant := range []string{"acme", "globex", "acme"} {
		res, err := b.client.Insert(ctx, skiplock.RawArgs{KindName: "sync", Payload: []byte(`{}`)},
			&skiplock.InsertOpts{Tenant: tenant, Queue: "sync"})
		if err != nil {
			t.Fatal(err)
		}
		tenantOf[res.Job.ID] = tenant
	}
	states := func(want map[string]skiplock.JobState) {
		t.Helper()
		for id, tenant := range tenantOf {
			j, err := b.client.JobGet(ctx, id)
			if err != nil || j.State != want[tenant] {
				t.Fatalf("job %d of %s: %v %v, want %s", id, tenant, j.State, err, want[tenant])
			}
		}
	}
	confirm := b.do("GET", "/bulk?action=pause&queue=sync", "admin", nil)
	if confirm.Code != http.StatusOK || !strings.Contains(confirm.Body.String(), `<b id="matched">3</b>`) {
		t.Fatalf("confirm pause: %d %s", confirm.Code, confirm.Body)
	}
	states(map[string]skiplock.JobState{"acme": skiplock.StatePending, "globex": skiplock.StatePending})
	if rec := b.do("GET", "/bulk?action=pause&queue=sync", "viewer", nil); rec.Code != http.StatusForbidden {
		t.Fatalf("a viewer's confirm page: %d", rec.Code)
	}
	post := func(secret, csrf, action string) *httptest.ResponseRecorder {
		return b.do("POST", "/bulk", secret, url.Values{"csrf": {csrf}, "action": {action}, "queue": {"sync"}})
	}
	if rec := post("viewer", b.dash.csrfToken("viewer"), "pause"); rec.Code != http.StatusForbidden {
		t.Fatalf("a viewer's bulk pause: %d", rec.Code)
	}
	if rec := post("admin", "", "pause"); rec.Code != http.StatusForbidden {
		t.Fatalf("a bulk pause without the CSRF token: %d", rec.Code)
	}
	states(map[string]skiplock.JobState{"acme": skiplock.StatePending, "globex": skiplock.StatePending})
	rec := post("acme", b.dash.csrfToken("acme"), "pause")
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "pause+applied+to+2+of+2+jobs") {
		t.Fatalf("acme's bulk pause: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	states(map[string]skiplock.JobState{"acme": skiplock.StatePaused, "globex": skiplock.StatePending})
	if rec := post("admin", b.dash.csrfToken("admin"), "pause"); rec.Code != http.StatusSeeOther {
		t.Fatalf("bulk pause: %d", rec.Code)
	}
	states(map[string]skiplock.JobState{"acme": skiplock.StatePaused, "globex": skiplock.StatePaused})
	confirm = b.do("GET", "/bulk?action=resume&queue=sync", "admin", nil)
	if !strings.Contains(confirm.Body.String(), `<b id="matched">3</b>`) {
		t.Fatalf("confirm resume: %d %s", confirm.Code, confirm.Body)
	}
	if rec := post("admin", b.dash.csrfToken("admin"), "resume"); rec.Code != http.StatusSeeOther {
		t.Fatalf("bulk resume: %d", rec.Code)
	}
	states(map[string]skiplock.JobState{"acme": skiplock.StatePending, "globex": skiplock.StatePending})
	if rec := b.do("GET", "/bulk?action=pause&state=completed", "admin", nil); rec.Code != http.StatusBadRequest {
		t.Fatalf("bulk pause of completed jobs: %d", rec.Code)
	}
	body := b.do("GET", "/jobs?queue=sync", "admin", nil).Body.String()
	for _, id := range []string{"bulk-pause", "bulk-resume"} {
		if !strings.Contains(body, `id="`+id+`"`) {
			t.Fatalf("the jobs page has no %s button", id)
		}
	}
	if body := b.do("GET", "/jobs?queue=sync", "viewer", nil).Body.String(); strings.Contains(body, `id="bulk-pause"`) {
		t.Fatal("a viewer sees the bulk pause button")
	}
}
