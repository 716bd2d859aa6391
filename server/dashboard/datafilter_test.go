package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
)

// The jobs page's filter form searches payload and metadata
// (payload.customer_id=42 metadata.region=eu) and attempt errors by type
// and message, keeps what was typed in its inputs, and answers 400 naming
// the input to a term it cannot read; such a filter offers no bulk action.
func TestHandlerFiltersByDataAndErrorMessage(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	ins := func(payload, meta string) int64 {
		res, err := b.client.Insert(ctx, skiplock.RawArgs{KindName: "bill", Payload: []byte(payload)},
			&skiplock.InsertOpts{Queue: "bill", Metadata: []byte(meta)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Job.ID
	}
	eu := ins(`{"customer_id":42,"order":{"id":"A 1"}}`, `{"region":"eu"}`)
	us := ins(`{"customer_id":42}`, `{"region":"us"}`)
	other := ins(`{"customer_id":"42"}`, `{"region":"eu"}`)
	jobs, err := b.client.Claim(ctx, skiplock.ClaimParams{Queue: "bill", WorkerID: "w", Max: 1})
	if err != nil || len(jobs) != 1 || jobs[0].ID != eu {
		t.Fatalf("claim: %v, %v", jobs, err)
	}
	if _, err := b.client.Fail(ctx, eu, skiplock.FailParams{WorkerID: "w", ErrorType: "timeout", Message: "Gateway timed out"}); err != nil {
		t.Fatal(err)
	}
	row := func(id int64) string { return `data-id="` + itoa(id) + `"` }
	for query, want := range map[string][]int64{
		"data=payload.customer_id%3D42":                                        {eu, us},
		"data=" + url.QueryEscape(`payload.customer_id="42"`):                  {other},
		"data=" + url.QueryEscape("payload.customer_id=42 metadata.region=eu"): {eu},
		"data=" + url.QueryEscape(`payload.order.id="A 1"`):                    {eu},
		"error_message=TIMED":                                                  {eu},
		"error_message=timed&error_type=other":                                 nil,
	} {
		rec := b.do("GET", "/jobs?"+query, "admin", nil)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", query, rec.Code, body)
		}
		for _, id := range []int64{eu, us, other} {
			if listed, wanted := strings.Contains(body, row(id)), contains64(want, id); listed != wanted {
				t.Errorf("%s: job %d listed %v, want %v", query, id, listed, wanted)
			}
		}
		if strings.Contains(body, `id="bulk-retry"`) {
			t.Errorf("%s: offers a bulk action that would not use the filter", query)
		}
	}
	body := b.do("GET", "/jobs?data="+url.QueryEscape("payload.customer_id=42 metadata.region=eu")+"&error_message=timed", "admin", nil).Body.String()
	if !strings.Contains(body, `value="payload.customer_id=42 metadata.region=eu"`) || !strings.Contains(body, `value="timed"`) {
		t.Error("the form does not keep the search as typed")
	}
	for _, q := range []string{"customer_id=42", "payload.=1", "payload.a", "payload.a..b=1", "metadata.region=eu metadata.region=us"} {
		rec := b.do("GET", "/jobs?data="+url.QueryEscape(q), "admin", nil)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "data") &&
			!strings.Contains(rec.Body.String(), "payload") {
			t.Errorf("data=%s: %d, want 400 naming the input", q, rec.Code)
		}
	}
}
