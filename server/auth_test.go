package server_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/server"
)

// TestAuthMatrix: every route × every role answers as docs/server.md says.
func TestAuthMatrix(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		tokens := map[string]string{}
		for _, role := range server.Roles {
			tokens[role] = createToken(t, b.drv, role, "")
		}
		admin := tokens[server.RoleAdmin]
		enq := func() int64 {
			return id(must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"x","queue":"q"}`), 201).job())
		}
		// A job for each route that acts on one; each worker route finds its
		// job held by "w".
		type route struct {
			method, path, body string
			allowed            []string
		}
		all := []string{"admin", "producer", "worker", "viewer"}
		routes := func() []route {
			j := enq()
			must(t, b.do(t, "POST", "/v1/queues/q/claim", admin, `{"worker_id":"w","max":100}`), 200)
			p := fmt.Sprintf("/v1/jobs/%d", j)
			return []route{
				{"POST", "/v1/jobs", `{"kind":"x","queue":"other"}`, []string{"admin", "producer"}},
				{"POST", "/v1/jobs/batch", `{"jobs":[{"kind":"x","queue":"other"}]}`, []string{"admin", "producer"}},
				{"GET", "/v1/jobs", "", all},
				{"GET", p, "", all},
				{"GET", "/v1/workflows/none", "", all},
				{"GET", "/v1/queues", "", all},
				{"GET", "/v1/kinds", "", all},
				{"GET", "/v1/stats", "", all},
				{"GET", "/v1/schedules", "", all},
				{"GET", "/metrics", "", all},
				{"PUT", "/v1/schedules/s", `{"kind":"x","every_seconds":60}`, []string{"admin", "producer"}},
				{"DELETE", "/v1/schedules/none", "", []string{"admin", "producer"}},
				{"POST", "/v1/queues/empty/claim", `{"worker_id":"w2"}`, []string{"admin", "worker"}},
				{"POST", p + "/heartbeat", `{"worker_id":"w"}`, []string{"admin", "worker"}},
				{"POST", "/v1/queues/q/pause", "", []string{"admin"}},
				{"POST", "/v1/queues/q/resume", "", []string{"admin"}},
				{"POST", p + "/pause", "", []string{"admin"}},
				{"POST", p + "/resume", "", []string{"admin"}},
				{"POST", p + "/retry", "", []string{"admin"}},
				{"POST", p + "/fail", `{"worker_id":"w","retryable":false}`, []string{"admin", "worker"}},
				{"POST", p + "/complete", `{"worker_id":"w"}`, []string{"admin", "worker"}},
				{"POST", p + "/cancel", "", []string{"admin"}},
			}
		}
		for _, role := range all {
			allowed := 0
			for _, r := range routes() {
				a := b.do(t, r.method, r.path, tokens[role], r.body)
				want := false
				for _, ok := range r.allowed {
					want = want || ok == role
				}
				code, _ := a.errCode()
				switch {
				case want && (a.status == 401 || a.status == 403):
					t.Errorf("%s may %s %s but got %d %s", role, r.method, r.path, a.status, a.raw)
				case !want && (a.status != 403 || code != "permission_denied"):
					t.Errorf("%s may not %s %s but got %d %s", role, r.method, r.path, a.status, a.raw)
				case want:
					allowed++
				}
			}
			if allowed == 0 {
				t.Errorf("%s may do nothing", role)
			}
		}
		// No token, an unknown token or another scheme: 401.
		for _, tok := range []string{"", "skl_unknown"} {
			a := b.do(t, "GET", "/v1/jobs", tok, nil)
			if code, _ := a.errCode(); a.status != 401 || code != "unauthenticated" {
				t.Errorf("token %q: %d %s", tok, a.status, a.raw)
			}
		}
		// /healthz needs no token.
		must(t, b.do(t, "GET", "/healthz", "", nil), 200)
	})
}

// TestTenantScope: a tenant-scoped token sees and touches only its
// tenant's jobs; another tenant's job is 404 and absent from lists.
func TestTenantScope(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		aAdmin := createToken(t, b.drv, "admin", "a")
		aProd := createToken(t, b.drv, "producer", "a")
		bProd := createToken(t, b.drv, "producer", "b")
		bWorker := createToken(t, b.drv, "worker", "b")

		// Enqueues are forced to the token's tenant.
		ja := must(t, b.do(t, "POST", "/v1/jobs", aProd, `{"kind":"x","tenant":"b","workflow_id":"wf"}`), 201).job()
		if ja["tenant"] != "a" {
			t.Fatalf("job of tenant a's token has tenant %v", ja["tenant"])
		}
		jb := must(t, b.do(t, "POST", "/v1/jobs", bProd, `{"kind":"x","workflow_id":"wf"}`), 201).job()
		batch := must(t, b.do(t, "POST", "/v1/jobs/batch", bProd, `{"jobs":[{"kind":"y","tenant":"a"}]}`), 201).jobs()
		if batch[0]["tenant"] != "b" {
			t.Fatalf("batch job of tenant b's token has tenant %v", batch[0]["tenant"])
		}
		pa, pb := fmt.Sprintf("/v1/jobs/%d", id(ja)), fmt.Sprintf("/v1/jobs/%d", id(jb))

		must(t, b.do(t, "GET", pa, aProd, nil), 200)
		must(t, b.do(t, "GET", pb, admin, nil), 200)
		// Another tenant's job answers word for word as a job that does
		// not exist.
		missing := fmt.Sprintf("/v1/jobs/%d", id(jb)+1000)
		for _, c := range []struct{ method, suffix, token string }{{"GET", "", aProd},
			{"POST", "/cancel", aAdmin}, {"POST", "/pause", aAdmin}, {"POST", "/retry", aAdmin}} {
			other := must(t, b.do(t, c.method, pb+c.suffix, c.token, nil), http.StatusNotFound)
			none := must(t, b.do(t, c.method, missing+c.suffix, c.token, nil), http.StatusNotFound)
			want := fmt.Sprintf(`{"error":{"code":"not_found","message":"job %d: not found"}}`, id(jb))
			if strings.TrimSpace(string(other.raw)) != want ||
				strings.TrimSpace(string(none.raw)) != strings.Replace(want, strconv.FormatInt(id(jb), 10), strconv.FormatInt(id(jb)+1000, 10), 1) {
				t.Errorf("%s %s: another tenant's job answers %s, a missing one %s", c.method, c.suffix, other.raw, none.raw)
			}
		}
		// Dependencies on another tenant's job are as missing as any.
		a := must(t, b.do(t, "POST", "/v1/jobs", aProd, map[string]any{"kind": "x", "depends_on": []int64{id(jb)}}), 400)
		if _, f := a.errCode(); f != "depends_on[0]" {
			t.Fatalf("field %q", f)
		}
		// Lists and workflows show only the tenant's jobs, whatever is asked.
		for _, q := range []string{"", "?tenant=b", "?workflow_id=wf"} {
			for _, j := range must(t, b.do(t, "GET", "/v1/jobs"+q, aProd, nil), 200).jobs() {
				if j["tenant"] != "a" {
					t.Fatalf("tenant a's list %q shows %v", q, j)
				}
			}
		}
		if n := len(must(t, b.do(t, "GET", "/v1/jobs", admin, nil), 200).jobs()); n != 3 {
			t.Fatalf("an unscoped token sees %d jobs, want 3", n)
		}
		wf := must(t, b.do(t, "GET", "/v1/workflows/wf", aProd, nil), 200).jobs()
		if len(wf) != 1 || wf[0]["tenant"] != "a" {
			t.Fatalf("tenant a's workflow: %v", wf)
		}
		// A scoped worker claims only its tenant's jobs; it gets 404 for
		// another tenant's job; aggregate views need an unscoped token.
		for _, j := range must(t, b.do(t, "POST", "/v1/queues/default/claim", bWorker, `{"worker_id":"w","max":10}`), 200).jobs() {
			if j["tenant"] != "b" {
				t.Fatalf("tenant b's worker claimed %v", j)
			}
		}
		must(t, b.do(t, "POST", "/v1/queues/default/claim", admin, `{"worker_id":"w","max":10}`), 200)
		must(t, b.do(t, "POST", pa+"/complete", bWorker, `{"worker_id":"w"}`), http.StatusNotFound)
		must(t, b.do(t, "POST", pb+"/complete", bWorker, `{"worker_id":"w","next":[{"kind":"z","tenant":"a"}]}`), 200)
		if j := must(t, b.do(t, "GET", "/v1/jobs?kind=z", admin, nil), 200).jobs(); len(j) != 1 || j[0]["tenant"] != "b" {
			t.Fatalf("next job of tenant b's worker: %v", j)
		}
		for _, p := range []string{"/v1/stats", "/v1/queues", "/metrics"} {
			must(t, b.do(t, "GET", p, aProd, nil), http.StatusForbidden)
		}
		// Schedules belong to the token's tenant.
		must(t, b.do(t, "PUT", "/v1/schedules/s1", aProd, `{"kind":"x","every_seconds":60}`), 200)
		if list := maps(must(t, b.do(t, "GET", "/v1/schedules", bProd, nil), 200).body["schedules"]); len(list) != 0 {
			t.Fatalf("tenant b sees tenant a's schedules: %v", list)
		}
		must(t, b.do(t, "DELETE", "/v1/schedules/s1", bProd, nil), http.StatusNotFound)
		must(t, b.do(t, "DELETE", "/v1/schedules/s1", aProd, nil), 200)
	})
}

// TestClosedWithoutTokens: a server that may not be open answers 401
// while no token exists.
func TestClosedWithoutTokens(t *testing.T) {
	b := setup(t, databases[0], func(c *server.Config) { c.OpenWithoutTokens = false })
	must(t, b.do(t, "GET", "/v1/jobs", "", nil), http.StatusUnauthorized)
	must(t, b.do(t, "GET", "/healthz", "", nil), 200)
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true,
		"0.0.0.0:8080": false, ":8080": false, "10.0.0.1:80": false, "[::]:80": false, "example.com:80": false} {
		if got := server.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}
