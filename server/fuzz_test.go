package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// FuzzRouter sends requests made of a fuzzed route, method, path segment,
// query, body and credentials to a server on a SQLite file and to one on
// PostgreSQL (each database refuses its own inputs: an int4 overflow, a
// NUL in text): no input may answer 5xx (a panic answers 500), and after
// a write every listing must still answer 200. As a plain test it runs the
// seed corpus in testdata/fuzz/FuzzRouter.
func FuzzRouter(f *testing.F) {
	pg, _ := pgtest.Schema(f)
	var targets []fuzzTarget
	var routes []string
	for _, drv := range []driver.Driver{sqlitetest.New(f), pg} {
		b := setupClient(f, drv, &skiplock.Config{}, nil)
		targets = append(targets, fuzzTarget{name: drv.Name(), h: b.srv.Handler(), tokens: []string{
			createToken(f, b.drv, "admin", ""), createToken(f, b.drv, "worker", "t1"), createToken(f, b.drv, "producer", "t1")}})
		routes = b.srv.Routes() // the same on each
	}
	for _, r := range routes {
		f.Add(r, "", "1", "", []byte(`{}`), uint8(0), "")
	}
	f.Fuzz(func(t *testing.T, route, method, seg, query string, body []byte, auth uint8, header string) {
		pattern := pickRoute(routes, route)
		m, path, _ := strings.Cut(pattern, " ")
		if method != "" {
			m = method
		}
		path = fillSegments(path, seg)
		if query != "" {
			path += "?" + query
		}
		for _, tg := range targets {
			tg.send(t, m, path, body, auth, header)
		}
	})
}

// fuzzTarget is a server FuzzRouter sends each input to, with its tokens:
// admin, a tenant's worker, a tenant's producer.
type fuzzTarget struct {
	name   string
	h      http.Handler
	tokens []string
}

// send sends one fuzzed request: no answer may be 5xx, and after a write
// that succeeded every listing must still answer 200.
func (tg fuzzTarget) send(t *testing.T, m, path string, body []byte, auth uint8, header string) {
	req, err := http.NewRequest(m, "http://skiplock.test"+path, bytes.NewReader(body))
	if err != nil {
		return // not a request a client could send
	}
	switch auth % 4 {
	case 0, 1, 2:
		req.Header.Set("Authorization", "Bearer "+tg.tokens[auth%4])
	case 3:
		if header != "" {
			req.Header.Set("Authorization", header)
		}
	}
	status, raw, cancelled := serve(tg.h, req)
	if status >= 500 && !cancelled {
		t.Fatalf("%s: %s %s %q: %d %s", tg.name, m, path, body, status, raw)
	}
	if status >= 200 && status < 300 && m != http.MethodGet {
		for _, list := range []string{"/v1/jobs?limit=20", "/v1/schedules", "/v1/queues", "/v1/stats"} {
			check, _ := http.NewRequest("GET", "http://skiplock.test"+list, nil)
			check.Header.Set("Authorization", "Bearer "+tg.tokens[0])
			if st, out, c := serve(tg.h, check); st != 200 && !c {
				t.Fatalf("%s: after %s %s %q: GET %s answers %d %s", tg.name, m, path, body, list, st, out)
			}
		}
	}
}

// pickRoute answers the route named by s, or one chosen by its bytes.
func pickRoute(routes []string, s string) string {
	n := 0
	for _, r := range routes {
		if r == s {
			return r
		}
	}
	for _, c := range []byte(s) {
		n += int(c)
	}
	return routes[n%len(routes)]
}

// fillSegments puts seg in place of each {name} segment of a route's
// path (seg may itself hold braces and slashes).
func fillSegments(path, seg string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			parts[i] = seg
		}
	}
	return strings.Join(parts, "/")
}

// serve runs one request in process. A request still running after a
// short while (a long poll, the event stream) is cancelled, as a client
// going away would; cancelled says so, and then its status means nothing.
func serve(h http.Handler, req *http.Request) (status int, body []byte, cancelled bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := time.AfterFunc(300*time.Millisecond, cancel)
	defer timer.Stop()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(ctx))
	cancelled = ctx.Err() != nil
	if ct := rec.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") && !json.Valid(rec.Body.Bytes()) && !cancelled {
		return http.StatusInternalServerError, append([]byte("answer is not JSON: "), rec.Body.Bytes()...), false
	}
	return rec.Code, rec.Body.Bytes(), cancelled
}
