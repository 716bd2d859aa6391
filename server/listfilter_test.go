package server_test

import (
	"fmt"
	"net/http"
	"net/url"
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
