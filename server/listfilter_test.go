package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestListByTagMetadataWorkerErrorAndTime: GET /v1/jobs filters by tag,
// metadata, worker, error type and time ranges, and names a bad one.
func TestListByTagMetadataWorkerErrorAndTime(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		start := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
		enq := func(body string) int64 { return id(must(t, b.do(t, "POST", "/v1/jobs", "", body), 201).job()) }
		vip := enq(`{"kind":"crawl","queue":"c","tags":["vip","eu"],"metadata":{"customer":"acme","n":5}}`)
		eu := enq(`{"kind":"crawl","queue":"c","tags":["eu"],"metadata":{"customer":"beta","n":"5"}}`)
		plain := enq(`{"kind":"crawl","queue":"other"}`)
		// A worker takes the queue's two jobs; the newer fails for good.
		claimed := must(t, b.do(t, "POST", "/v1/queues/c/claim", "", `{"worker_id":"crawler-7","max":2}`), 200).jobs()
		if len(claimed) != 2 {
			t.Fatalf("claimed %d jobs", len(claimed))
		}
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", eu), "",
			`{"worker_id":"crawler-7","error":{"type":"robots_denied","message":"no"},"retryable":false}`), 200)
		list := func(query string) []int64 {
			t.Helper()
			var out []int64
			for _, j := range must(t, b.do(t, "GET", "/v1/jobs?"+query, "", nil), 200).jobs() {
				out = append(out, id(j))
			}
			return out
		}
		for query, want := range map[string][]int64{
			"tag=eu":                   {eu, vip},
			"tag=eu&tag=vip":           {vip},
			"metadata=customer:acme":   {vip},
			"metadata=n:5":             {vip},
			`metadata=n:"5"`:           {eu},
			"worker_id=crawler-7":      {eu, vip},
			"error_type=robots_denied": {eu},
			"finished_after=" + url.QueryEscape(start):             {eu},
			"created_after=" + url.QueryEscape(start) + "&tag=vip": {vip},
			"created_before=" + url.QueryEscape(start):             nil,
			"state=pending": {plain},
		} {
			if got := list(query); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", query, got, want)
			}
		}
		for query, field := range map[string]string{
			"created_after=yesterday": "created_after",
			"finished_before=1":       "finished_before",
			"metadata=nocolon":        "metadata",
			`metadata=a"b:1`:          "metadata",
			"tag=":                    "tag",
			"created_after=2026-01-02T00:00:00Z&created_before=2026-01-01T00:00:00Z": "created_before",
		} {
			a := must(t, b.do(t, "GET", "/v1/jobs?"+query, "", nil), http.StatusBadRequest)
			if code, f := a.errCode(); code != "invalid_argument" || f != field {
				t.Errorf("%s: %s field %q, want invalid_argument %q", query, code, f, field)
			}
		}
	})
}

// TestListByIdempotencyKey: GET /v1/jobs?idempotency_key= finds the jobs
// inserted under a key, live and finished; a tenant's token finds only its
// tenant's.
func TestListByIdempotencyKey(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		viewerA := createToken(t, b.drv, "viewer", "a")
		enq := func(body string) int64 { return id(must(t, b.do(t, "POST", "/v1/jobs", admin, body), 201).job()) }
		first := enq(`{"kind":"order","queue":"k","idempotency_key":"order-7"}`)
		claimed := must(t, b.do(t, "POST", "/v1/queues/k/claim", admin, `{"worker_id":"w"}`), 200).jobs()
		if len(claimed) != 1 {
			t.Fatalf("claimed %d jobs", len(claimed))
		}
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", first), admin, `{"worker_id":"w"}`), 200)
		again := enq(`{"kind":"order","idempotency_key":"order-7"}`)
		ofA := enq(`{"kind":"order","tenant":"a","idempotency_key":"order-7"}`)
		enq(`{"kind":"order","idempotency_key":"order-8"}`)
		list := func(token, query string) []int64 {
			t.Helper()
			var out []int64
			for _, j := range must(t, b.do(t, "GET", "/v1/jobs?"+query, token, nil), 200).jobs() {
				out = append(out, id(j))
			}
			return out
		}
		for _, c := range []struct {
			token, query string
			want         []int64
		}{
			{admin, "idempotency_key=order-7", []int64{ofA, again, first}},
			{admin, "idempotency_key=order-7&tenant=", []int64{again, first}},
			{admin, "idempotency_key=order-7&state=completed", []int64{first}},
			{admin, "idempotency_key=nope", nil},
			{viewerA, "idempotency_key=order-7", []int64{ofA}},
			{viewerA, "idempotency_key=order-8", nil},
		} {
			if got := list(c.token, c.query); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s: %v, want %v", c.query, got, c.want)
			}
		}
		long := strings.Repeat("k", 100000)
		a := must(t, b.do(t, "GET", "/v1/jobs?idempotency_key="+long, admin, nil), http.StatusBadRequest)
		if code, f := a.errCode(); code != "invalid_argument" || f != "idempotency_key" {
			t.Errorf("a long key: %s field %q, want invalid_argument idempotency_key", code, f)
		}
	})
}
