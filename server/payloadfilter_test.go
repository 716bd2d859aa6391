package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// TestListByPayloadAndErrorMessage: GET /v1/jobs filters by payload
// (payload=KEY:VALUE, a.b nested, 64-bit numbers as written) and by an
// attempt error's message, any case; bad ones answer 400 naming the field.
func TestListByPayloadAndErrorMessage(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		enq := func(body string) int64 { return id(must(t, b.do(t, "POST", "/v1/jobs", "", body), 201).job()) }
		a := enq(`{"kind":"bill","queue":"p","payload":{"customer_id":42,"order":{"id":"A-1"},"big":9007199254740993}}`)
		s := enq(`{"kind":"bill","queue":"p","payload":{"customer_id":"42","order":{"id":"A-2"}}}`)
		enq(`{"kind":"bill","queue":"q","payload":{"customer_id":7}}`)
		must(t, b.do(t, "POST", "/v1/queues/p/claim", "", `{"worker_id":"w","max":2}`), 200)
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", s), "",
			`{"worker_id":"w","error":{"type":"declined","message":"Card DECLINED by issuer"},"retryable":false}`), 200)
		list := func(query string) []int64 {
			t.Helper()
			var out []int64
			for _, j := range must(t, b.do(t, "GET", "/v1/jobs?"+query, "", nil), 200).jobs() {
				out = append(out, id(j))
			}
			return out
		}
		for query, want := range map[string][]int64{
			"payload=customer_id:42":                          {a},
			`payload=customer_id:"42"`:                        {s},
			"payload=order.id:A-2":                            {s},
			"payload=order.id:A-1&payload=customer_id:42":     {a},
			"payload=big:9007199254740993":                    {a},
			"payload=big:9007199254740992":                    nil,
			"error_message=" + url.QueryEscape("declined by"): {s},
			"error_message=timeout":                           nil,
			"error_message=declined&payload=customer_id:42":   nil,
		} {
			if got := list(query); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", query, got, want)
			}
		}
		for query, field := range map[string]string{
			"payload=nocolon":                            "payload",
			`payload=a"b:1`:                              "payload",
			"payload=a..b:1":                             "payload",
			"payload=a:1&payload=a.b:2":                  "payload",
			"error_message=" + url.QueryEscape("a\x00b"): "error_message",
		} {
			a := must(t, b.do(t, "GET", "/v1/jobs?"+query, "", nil), http.StatusBadRequest)
			if code, f := a.errCode(); code != "invalid_argument" || f != field {
				t.Errorf("%s: %s field %q, want invalid_argument %q", query, code, f, field)
			}
		}
	})
}

// TestJobsBulkByErrorPayloadAndIDs: POST /v1/jobs/bulk's filter picks by
// error type and message, payload, metadata and ids (numbers or strings);
// bad values answer 400 naming filter.<field>.
func TestJobsBulkByErrorPayloadAndIDs(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		enq := func(body string) int64 { return id(must(t, b.do(t, "POST", "/v1/jobs", admin, body), 201).job()) }
		var failed []int64
		for i, msg := range []string{"Gateway timeout", "gateway TIMEOUT again", "disk full"} {
			j := enq(fmt.Sprintf(`{"kind":"bill","queue":"f","payload":{"n":%d,"c":{"region":"eu"}},"metadata":{"team":"red"}}`, i))
			must(t, b.do(t, "POST", "/v1/queues/f/claim", admin, `{"worker_id":"w"}`), 200)
			must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", j), admin,
				fmt.Sprintf(`{"worker_id":"w","error":{"type":"t%d","message":%q},"retryable":false}`, i%2, msg)), 200)
			failed = append(failed, j)
		}
		live := []int64{enq(`{"kind":"bill","payload":{"n":1}}`), enq(`{"kind":"bill","payload":{"n":2}}`)}
		count := func(body string) float64 {
			t.Helper()
			a := must(t, b.do(t, "POST", "/v1/jobs/bulk", admin, body), 200)
			return a.body["matched"].(float64)
		}
		for body, want := range map[string]float64{
			`{"action":"retry","filter":{"error_message":"timeout"},"dry_run":true}`:                                                  2,
			`{"action":"retry","filter":{"error_type":"t0"},"dry_run":true}`:                                                          2,
			`{"action":"retry","filter":{"error_type":"t0","error_message":"disk"},"dry_run":true}`:                                   1,
			`{"action":"retry","filter":{"payload":{"c.region":"eu","n":1}},"dry_run":true}`:                                          1,
			`{"action":"retry","filter":{"metadata":{"team":"red"}},"dry_run":true}`:                                                  3,
			fmt.Sprintf(`{"action":"cancel","filter":{"ids":[%d,"%d"]},"dry_run":true}`, live[0], live[1]):                            2,
			fmt.Sprintf(`{"action":"cancel","filter":{"ids":[%d],"payload":{"n":2}},"dry_run":true}`, live[0]):                        0,
			fmt.Sprintf(`{"action":"retry","filter":{"ids":[%d,%d],"error_message":"timeout"},"dry_run":true}`, failed[0], failed[2]): 1,
		} {
			if got := count(body); got != want {
				t.Errorf("%s: matched %v, want %v", body, got, want)
			}
		}
		if got := count(fmt.Sprintf(`{"action":"cancel","filter":{"ids":["%d"]}}`, live[1])); got != 1 {
			t.Fatalf("cancel by id matched %v", got)
		}
		for i, want := range []string{"pending", "cancelled"} {
			if st := must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", live[i]), admin, nil), 200).job()["state"]; st != want {
				t.Fatalf("job %d: %v, want %s", live[i], st, want)
			}
		}
		for body, field := range map[string]string{
			`{"action":"cancel","filter":{"ids":[0]}}`:                "filter.ids[0]",
			`{"action":"cancel","filter":{"ids":[1,"x"]}}`:            "filter.ids[1]",
			`{"action":"cancel","filter":{"ids":[1.5]}}`:              "filter.ids[0]",
			`{"action":"cancel","filter":{"ids":[true]}}`:             "filter.ids[0]",
			`{"action":"retry","filter":{"error_type":"a\u0000"}}`:    "filter.error_type",
			`{"action":"retry","filter":{"error_message":"a\u0000"}}`: "filter.error_message",
			`{"action":"retry","filter":{"payload":{"a..b":1}}}`:      "filter.payload",
			`{"action":"retry","filter":{"metadata":{"a\"":1}}}`:      "filter.metadata",
			`{"action":"retry","filter":{"payload":[1]}}`:             "filter.payload",
			`{"action":"retry","filter":{"error_type":""}}`:           "filter",
		} {
			a := must(t, b.do(t, "POST", "/v1/jobs/bulk", admin, body), http.StatusBadRequest)
			if code, f := a.errCode(); code != "invalid_argument" || f != field {
				t.Errorf("%s: %s field %q, want invalid_argument %q: %s", body, code, f, field, a.raw)
			}
		}
	})
}
