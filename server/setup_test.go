package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/server"
)

// database is one database the tests run on: open answers a migrated
// driver for an in-process server, url a fresh database for a server
// process.
type database struct {
	name string
	open func(t *testing.T) driver.Driver
	url  func(t *testing.T) string
}

var databases = []database{
	{name: "postgres",
		open: func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d },
		url:  func(t *testing.T) string { _, u := pgtest.Schema(t); return u }},
	{name: "sqlite",
		open: func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
		url:  func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "skiplock.db") }},
}

// eachDB runs fn on every database, in parallel.
func eachDB(t *testing.T, fn func(t *testing.T, db database)) {
	t.Helper()
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			fn(t, db)
		})
	}
}

// bundle is what a test of the in-process server needs.
type bundle struct {
	drv    driver.Driver
	client *skiplock.Client
	srv    *server.Server
	ts     *httptest.Server
}

func setup(t *testing.T, db database, mod func(*server.Config)) *bundle {
	t.Helper()
	drv := db.open(t)
	return setupOn(t, drv, mod)
}

func setupOn(t *testing.T, drv driver.Driver, mod func(*server.Config)) *bundle {
	t.Helper()
	return setupClient(t, drv, &skiplock.Config{}, mod)
}

// setupClient is setupOn with a client configuration.
func setupClient(t testing.TB, drv driver.Driver, ccfg *skiplock.Config, mod func(*server.Config)) *bundle {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ccfg.Logger = log
	client, err := skiplock.NewClient(drv, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Client: client, Logger: log, OpenWithoutTokens: true, AuthCacheTTL: -1,
		EventPollInterval: 20 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		_ = srv.Close()
		ts.Close()
	})
	return &bundle{drv: drv, client: client, srv: srv, ts: ts}
}

// testWriter logs into the test, and not after it ended.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	if os.Getenv("SKIPLOCK_TEST_LOG") != "" {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// answer is a decoded JSON answer.
type answer struct {
	status int
	body   map[string]any
	raw    []byte
}

// errCode answers the error code and field of an error answer.
func (a answer) errCode() (string, string) {
	e, _ := a.body["error"].(map[string]any)
	code, _ := e["code"].(string)
	field, _ := e["field"].(string)
	return code, field
}

func (a answer) job() map[string]any {
	j, _ := a.body["job"].(map[string]any)
	return j
}

func (a answer) jobs() []map[string]any {
	return maps(a.body["jobs"])
}

func maps(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, len(list))
	for i, e := range list {
		out[i], _ = e.(map[string]any)
	}
	return out
}

// do sends a request: body is a string (sent as is) or a value (as JSON).
func (b *bundle) do(t *testing.T, method, path, token string, body any) answer {
	t.Helper()
	return request(t, b.ts.URL, method, path, token, body)
}

func request(t *testing.T, base, method, path, token string, body any) answer {
	t.Helper()
	var raw any = body
	if body != nil {
		if _, ok := body.(string); !ok {
			bs, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			raw = string(bs)
		}
	} else {
		raw = ""
	}
	a, err := doRequest(base, method, path, token, raw.(string))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if a.status >= 500 && a.status != http.StatusServiceUnavailable {
		t.Errorf("%s %s: %d %s", method, path, a.status, a.raw)
	}
	return a
}

// tryRequest is request for goroutines and servers that may be down.
func tryRequest(base, method, path, body string) (answer, error) {
	return doRequest(base, method, path, "", body)
}

var httpClient = &http.Client{Timeout: 2 * time.Minute}

func doRequest(base, method, path, token, body string) (answer, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, base+path, rd)
	if err != nil {
		return answer{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	a := answer{status: res.StatusCode, raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			return a, fmt.Errorf("answer is not JSON: %v: %s", err, raw)
		}
	}
	return a, nil
}

// must checks the status of an answer.
func must(t *testing.T, a answer, status int) answer {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.raw)
	}
	return a
}

// id reads a job id from a decoded job.
func id(j map[string]any) int64 {
	f, _ := j["id"].(float64)
	return int64(f)
}

// createToken stores a token and answers its secret.
func createToken(t testing.TB, drv driver.Driver, role, tenant string) string {
	t.Helper()
	secret, err := server.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokenStore(t, drv).TokenCreate(context.Background(), &driver.Token{Name: role + "-" + tenant,
		Hash: server.HashToken(secret), Role: role, Tenant: tenant}); err != nil {
		t.Fatal(err)
	}
	return secret
}

// tokenStore is drv's token store.
func tokenStore(t testing.TB, drv driver.Driver) driver.TokenStore {
	t.Helper()
	s, err := driver.As[driver.TokenStore](drv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
